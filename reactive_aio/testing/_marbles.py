"""Marble strings: timelines written as text, played by `cold`, checked by `expect_marbles`.

Syntax (every token takes exactly one frame, *frame* seconds of the loop clock):

* ``-`` nothing happens in this frame;
* a letter or digit: an item, looked up in *values* (the character itself when absent);
* ``|`` completion, ``#`` an error (the *error* argument);
* ``(ab|)`` several signals in the same frame;
* ``^`` the subscription point: time zero is this frame, tokens before it are dropped;
* spaces are ignored, so timelines can be aligned.

So ``"-a-b-|"`` is ``a`` at 1, ``b`` at 3 and completion at 5 frames after subscribing.
`record` returns a `Recording` of what a publisher really did, as ``(time, kind, value)``
tuples and rendered back to a marble string (e.g. for documentation diagrams).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, Generic, TypeVar, final, overload

import attrs

from .._core import (
    MAX_DEMAND,
    RESOLUTION,
    BufferDrain,
    Publisher,
    Subscriber,
    require_not_none,
    require_running_loop,
)
from .._flux import Flux
from ._test_subscriber import TestSubscriber

__all__ = (
    "ColdPublisher",
    "Recording",
    "cold",
    "expect_marbles",
    "parse_marbles",
    "record",
    "render_marbles",
)

T = TypeVar("T")

Event = tuple[float, str, object]
"""``(time in frames or seconds, kind, value)``; kind is ``"next"``, ``"error"`` or ``"complete"``."""


def parse_marbles(
    marbles: str,
    values: Mapping[str, object] | None = None,
    *,
    error: BaseException | None = None,
) -> list[tuple[int, str, object]]:
    """Parse *marbles* into ``(frame, kind, value)`` events, frames counted from ``^``."""
    events: list[tuple[int, str, object]] = []
    frame = 0
    origin = 0
    group: list[tuple[int, str, object]] | None = None
    for char in marbles:
        if char.isspace():
            continue
        if char == "(":
            if group is not None:
                raise ValueError(f"nested '(' in marbles {marbles!r}")
            group = []
            continue
        if char == ")":
            if group is None:
                raise ValueError(f"')' without '(' in marbles {marbles!r}")
            events.extend(group)
            group = None
            frame += 1
            continue
        if char == "^":
            origin = frame
        elif char == "|":
            (group if group is not None else events).append((frame, "complete", None))
        elif char == "#":
            failure = error if error is not None else RuntimeError("error")
            (group if group is not None else events).append((frame, "error", failure))
        elif char != "-":
            value = values[char] if values is not None and char in values else char
            (group if group is not None else events).append((frame, "next", value))
        if group is None:
            frame += 1
    if group is not None:
        raise ValueError(f"'(' without ')' in marbles {marbles!r}")
    return [(when - origin, kind, value) for when, kind, value in events if when >= origin]


def render_marbles(
    events: list[tuple[int, str, object]], values: Mapping[str, object] | None = None
) -> str:
    """Render ``(frame, kind, value)`` events as a marble string (the inverse of parsing).

    An item is written as the key of *values* it equals, else as itself when it is a
    one-character string, else as ``?``.
    """
    names = {id(v): k for k, v in (values or {}).items()}
    by_value = list((values or {}).items())

    def name(value: object) -> str:
        if id(value) in names:
            return names[id(value)]
        for key, candidate in by_value:
            if candidate == value:
                return key
        return value if isinstance(value, str) and len(value) == 1 else "?"

    if not events:
        return ""
    out: list[str] = []
    last = max(when for when, _, _ in events)
    for frame in range(last + 1):
        here = [
            "|" if kind == "complete" else "#" if kind == "error" else name(value)
            for when, kind, value in events
            if when == frame
        ]
        out.append("-" if not here else here[0] if len(here) == 1 else f"({''.join(here)})")
    return "".join(out)


@final
@attrs.frozen
class ColdPublisher(Publisher[T], Generic[T]):
    """Plays a parsed timeline afresh for every subscriber, on the loop clock.

    Backpressure: items that are due while the subscriber has no demand are held and
    emitted on request (it is a test source: it never overflows).
    """

    events: tuple[tuple[int, str, object], ...]
    frame: float

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        loop = require_running_loop("cold marbles")
        player = _Player(loop, list(self.events), self.frame, loop.time())
        out = BufferDrain[T](subscriber, on_release=player.stop)
        player.out = out
        out.start()
        if not out.done:
            player.schedule()


@final
@attrs.define(eq=False)
class _Player:
    loop: asyncio.AbstractEventLoop
    events: list[tuple[int, str, object]]
    frame: float
    start: float
    out: BufferDrain[Any] | None = None
    handle: asyncio.TimerHandle | None = None
    index: int = 0

    def schedule(self) -> None:
        if self.index < len(self.events):
            when = self.start + self.events[self.index][0] * self.frame
            self.handle = self.loop.call_at(when, self.play)

    def play(self) -> None:
        self.handle = None
        out = self.out
        if out is None:
            return
        now = self.loop.time()
        events = self.events
        while self.index < len(events) and not out.done:
            when, kind, value = events[self.index]
            if self.start + when * self.frame - now > RESOLUTION:
                break
            self.index += 1
            if kind == "next":
                out.push(value)
            elif kind == "complete":
                out.finish()
            else:
                assert isinstance(value, BaseException)
                out.finish(value)
        if not out.done:
            self.schedule()

    def stop(self) -> None:
        self.out = None
        handle = self.handle
        if handle is not None:
            self.handle = None
            handle.cancel()


@overload
def cold(
    marbles: str, values: None = None, *, error: BaseException | None = None, frame: float = 1.0
) -> Flux[str]: ...


@overload
def cold(
    marbles: str,
    values: Mapping[str, T],
    *,
    error: BaseException | None = None,
    frame: float = 1.0,
) -> Flux[T]: ...


def cold(
    marbles: str,
    values: Mapping[str, Any] | None = None,
    *,
    error: BaseException | None = None,
    frame: float = 1.0,
) -> Flux[Any]:
    """A `Flux` that plays *marbles* for each subscriber, one token per *frame* seconds."""
    if not frame > 0:
        raise ValueError(f"frame must be > 0 seconds, got {frame}")
    events = parse_marbles(marbles, values, error=error)
    publisher: ColdPublisher[Any] = ColdPublisher(tuple(events), frame)
    return Flux.from_publisher(publisher)


@final
@attrs.frozen
class Recording:
    """What a subscriber saw: ``(seconds since subscribing, kind, value)`` per signal."""

    timeline: tuple[Event, ...]
    frame: float

    def frames(self) -> list[tuple[int, str, object]]:
        """The timeline in whole frames (rounded to the nearest frame)."""
        return [(round(when / self.frame), kind, value) for when, kind, value in self.timeline]

    def to_marbles(self, values: Mapping[str, object] | None = None) -> str:
        """The timeline as a marble string (see `render_marbles`)."""
        return render_marbles(self.frames(), values)


async def record(
    publisher: Publisher[T],
    *,
    frame: float = 1.0,
    duration: float | None = None,
    request: int = MAX_DEMAND,
    timeout: float = 3600.0,
) -> Recording:
    """Subscribe with *request* demand until termination, or for *duration* seconds then cancel.

    Without *duration*, a publisher that has not terminated after *timeout* seconds (loop
    clock) fails the recording with `AssertionError`.
    """
    subscriber = TestSubscriber[T](request)
    loop = asyncio.get_running_loop()
    start = loop.time()
    publisher.subscribe(subscriber)
    if duration is None:
        try:
            await subscriber.wait_terminated(timeout=timeout)
        except TimeoutError:
            subscriber.cancel()
            raise AssertionError(
                f"not terminated after {timeout} s; signals: {subscriber.timeline}"
            ) from None
    else:
        try:
            await subscriber.wait_until(lambda: subscriber.terminated, timeout=duration)
        except TimeoutError:
            pass
        if not subscriber.terminated:
            subscriber.cancel()
    timeline = tuple(
        (when - start, kind, value)
        for when, kind, value in subscriber.timeline
        if kind != "subscribe"
    )
    return Recording(timeline, frame)


async def expect_marbles(
    publisher: Publisher[Any],
    marbles: str,
    values: Mapping[str, object] | None = None,
    *,
    error: BaseException | None = None,
    frame: float = 1.0,
    request: int = MAX_DEMAND,
) -> Recording:
    """Record *publisher* and assert its timeline equals *marbles* (errors compare by type and
    message). A timeline that does not terminate is recorded up to its last frame."""
    expected = parse_marbles(marbles, values, error=error)
    terminates = any(kind != "next" for _, kind, _ in expected)
    last = max((when for when, _, _ in expected), default=0)
    recording = await record(
        publisher,
        frame=frame,
        request=request,
        duration=None if terminates else (last + 0.5) * frame,
    )
    actual = recording.frames()
    if _comparable(actual) != _comparable(expected):
        raise AssertionError(
            f"marbles differ:\n expected {marbles.replace(' ', '')!r}\n actual   "
            f"{recording.to_marbles(values)!r}\n expected events {expected}\n actual events   {actual}"
        )
    return recording


def _comparable(events: list[tuple[int, str, object]]) -> list[tuple[int, str, object]]:
    return [
        (when, kind, (type(value), str(value)) if kind == "error" else value)
        for when, kind, value in events
    ]
