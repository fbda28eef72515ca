"""`StepVerifier`: a scripted expectation of the signals a publisher sends, step by step.

Build the script with chained calls, then ``await verifier.verify()``::

    await (
        StepVerifier.create(Flux.range(0, 3), initial_request=1)
        .expect_next(0)
        .then_request(2)
        .expect_next(1, 2)
        .expect_complete()
        .verify()
    )

Waiting steps wait on the running loop's clock: on a `VirtualTimeLoop` that is virtual time,
so ``then_await(3600)`` costs nothing. A failed step raises `AssertionError` naming the step
and listing the signals received.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any, Generic, Self, TypeVar, final

import attrs

from .._core import MAX_DEMAND, Publisher
from ._test_subscriber import TestSubscriber
from ._virtual_time import VirtualTimeLoop

__all__ = ("StepVerifier",)

T = TypeVar("T")


async def sleep_on_clock(seconds: float) -> None:
    """Sleep *seconds* on the running loop's clock (advancing it on a manual virtual loop)."""
    loop = asyncio.get_running_loop()
    if isinstance(loop, VirtualTimeLoop):
        await loop.advance_by(seconds)
    else:
        await asyncio.sleep(seconds)


@final
@attrs.define(eq=False)
class _Step:
    description: str
    run: Callable[[_Run], Awaitable[None]]


@final
@attrs.define(eq=False)
class _Run:
    """One verification in progress: the subscriber and the read position in its signals."""

    subscriber: TestSubscriber[Any]
    timeout: float
    cursor: int = 0

    def describe(self) -> str:
        signals = [
            f"{kind}({value!r})" if kind in ("next", "error") else kind
            for _, kind, value in self.subscriber.timeline
            if kind != "subscribe"
        ]
        return f"signals received: [{', '.join(signals)}]"

    def signals(self) -> list[tuple[float, str, object]]:
        return [entry for entry in self.subscriber.timeline if entry[1] != "subscribe"]

    async def take(self) -> tuple[str, object]:
        """The next unread signal, waiting for it at most ``self.timeout`` seconds."""
        await self.subscriber.wait_until(lambda: len(self.signals()) > self.cursor, self.timeout)
        _, kind, value = self.signals()[self.cursor]
        self.cursor += 1
        return kind, value


@final
@attrs.define(eq=False)
class StepVerifier(Generic[T]):
    """A script of expectations about one subscription to *publisher* (see the module docs)."""

    _publisher: Publisher[T]
    _initial_request: int
    _steps: list[_Step] = attrs.field(factory=list, init=False)

    @classmethod
    def create(
        cls, publisher: Publisher[T], *, initial_request: int = MAX_DEMAND
    ) -> StepVerifier[T]:
        """Script a subscription to *publisher* that requests *initial_request* at once (0: none)."""
        if initial_request < 0:
            raise ValueError(f"initial_request must be >= 0, got {initial_request}")
        return cls(publisher, initial_request)

    # -- expectations -------------------------------------------------------------------

    def expect_next(self, *items: T) -> Self:
        """The next signals are ``on_next`` of exactly *items*, in order."""
        for item in items:
            self._add(f"expect_next({item!r})", _expect_item(_equals(item), repr(item)))
        return self

    def expect_next_count(self, count: int) -> Self:
        """The next *count* signals are items (any values)."""

        async def run(state: _Run) -> None:
            for index in range(count):
                kind, value = await state.take()
                if kind != "next":
                    raise AssertionError(
                        f"expected {count} items, got {index} then {kind}({value!r})"
                    )

        return self._add(f"expect_next_count({count})", run)

    def expect_next_matches(self, predicate: Callable[[T], object], what: str = "") -> Self:
        """The next signal is an item for which *predicate* is true."""
        label = what or getattr(predicate, "__name__", "predicate")
        return self._add(f"expect_next_matches({label})", _expect_item(predicate, label))

    def expect_error(self, kind: type[BaseException] = Exception, match: str | None = None) -> Self:
        """The next signal is ``on_error`` with an instance of *kind* whose message contains *match*."""

        async def run(state: _Run) -> None:
            signal, value = await state.take()
            if signal != "error" or not isinstance(value, kind):
                raise AssertionError(f"expected on_error({kind.__name__}), got {signal}({value!r})")
            if match is not None and match not in str(value):
                raise AssertionError(f"error message {str(value)!r} does not contain {match!r}")

        return self._add(f"expect_error({kind.__name__}, match={match!r})", run)

    def expect_complete(self) -> Self:
        """The next signal is ``on_complete``."""

        async def run(state: _Run) -> None:
            signal, value = await state.take()
            if signal != "complete":
                raise AssertionError(f"expected on_complete, got {signal}({value!r})")

        return self._add("expect_complete()", run)

    def expect_no_event(self, duration: float) -> Self:
        """No signal at all arrives during the next *duration* seconds (of the loop clock)."""

        async def run(state: _Run) -> None:
            await sleep_on_clock(duration)
            extra = state.signals()[state.cursor :]
            if extra:
                _, kind, value = extra[0]
                raise AssertionError(f"expected no event for {duration} s, got {kind}({value!r})")

        return self._add(f"expect_no_event({duration})", run)

    # -- actions ------------------------------------------------------------------------

    def then_request(self, n: int) -> Self:
        """Request *n* more items."""

        async def run(state: _Run) -> None:
            state.subscriber.request(n)

        return self._add(f"then_request({n})", run)

    def then_cancel(self) -> Self:
        """Cancel the subscription (later steps may still check what arrived before)."""

        async def run(state: _Run) -> None:
            state.subscriber.cancel()

        return self._add("then_cancel()", run)

    def then_await(self, duration: float = 0.0) -> Self:
        """Let *duration* seconds of the loop clock pass (virtual on a `VirtualTimeLoop`)."""

        async def run(state: _Run) -> None:
            await sleep_on_clock(duration)

        return self._add(f"then_await({duration})", run)

    def then(self, action: Callable[[], object]) -> Self:
        """Run *action* (a function, or an async function that is awaited)."""

        async def run(state: _Run) -> None:
            result = action()
            if inspect.isawaitable(result):
                await result

        return self._add(f"then({getattr(action, '__name__', 'action')})", run)

    # -- running ------------------------------------------------------------------------

    async def verify(self, timeout: float = 5.0) -> TestSubscriber[T]:
        """Subscribe and run the script; raise `AssertionError` at the first failed step.

        *timeout* bounds each wait for an expected signal, in seconds of the loop clock
        (virtual on a `VirtualTimeLoop`; ``then_await``/``expect_no_event`` durations do not
        count against it). Returns the recording subscriber.
        """
        subscriber = TestSubscriber[T](self._initial_request)
        state = _Run(subscriber, timeout)
        number, step = 0, _Step("subscribe", _nothing)
        try:
            self._publisher.subscribe(subscriber)
            for index, current in enumerate(self._steps, 1):
                number, step = index, current
                await step.run(state)
        except TimeoutError:
            raise AssertionError(
                f"step {number} {step.description}: timed out after {timeout} s; {state.describe()}"
            ) from None
        except AssertionError as failure:
            raise AssertionError(
                f"step {number} {step.description} failed: {failure}; {state.describe()}"
            ) from None
        return subscriber

    def _add(self, description: str, run: Callable[[_Run], Awaitable[None]]) -> Self:
        self._steps.append(_Step(description, run))
        return self


def _equals(expected: object) -> Callable[[object], bool]:
    def equals(value: object) -> bool:
        return bool(value == expected)

    return equals


async def _nothing(state: _Run) -> None:
    pass


def _expect_item(
    predicate: Callable[[Any], object], label: str
) -> Callable[[_Run], Awaitable[None]]:
    async def run(state: _Run) -> None:
        kind, value = await state.take()
        if kind != "next":
            raise AssertionError(f"expected an item matching {label}, got {kind}({value!r})")
        if not predicate(value):
            raise AssertionError(f"expected {label}, got next({value!r})")

    return run
