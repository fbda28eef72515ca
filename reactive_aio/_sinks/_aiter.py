"""``async for x in flux``, `to_async_iterator`, and the pull buffer every async consumer reads.

Backpressure: a `PullSubscriber` holds at most *window* items, requested or buffered. A writer
(`PullSubscriber.next`, `poll`, `take`) has the window topped up when it comes back for more
after dealing with earlier items, so a window of 1 asks for the next item only once the
previous one was written; ``async for`` requests a window of ``prefetch`` items up front and
tops it up as items are taken. Either way in one batch once three quarters of the window are
free (`replenish_threshold`), or once nothing is asked: the library's one policy, through its
`DemandWindow` (what was requested and not taken yet, counted a run at a time).
Behind an async boundary (``publish_on``) the buffer takes the boundary's place (async
fusion, see `fuse_boundary`): it is subscribed to the boundary's source, holds at most the
boundary's ``buffer_size`` items and re-requests in the boundary's batches, every request made
from a loop callback, so upstream never emits on the reader's stack; over a source at hand, a
request is pulled in one step (`PulledSubscription`). ``async for`` over ``batch`` right after
the boundary (or over a source at hand) reads slices of this one buffer (`iterate_batches`).
When the source's items are at hand (a synchronous source, through its fused maps, see
`items_at_hand`), a request pulls them on the spot, in one step (a `PulledSubscription`
without a loop): nothing before the reader asks, no signal per item.
Errors: the stream's error is raised after the buffered items; an upstream that sends more
than the window fails the stream with `MissingBackpressureError` (rule 1.1) after them.
Loop: a publisher of another library is adopted at the loop boundary, so its signals reach
the buffer inside the consuming loop, whatever thread sends them. Leaving an ``async for``
early (or dropping the iterator, or ``aclose()``) cancels the subscription.
Rules: the reader's task does the work, so the publisher is never held up by it (rule 2.2); a
signal from another thread is handed to the consuming loop before it is looked at (rule
2.11); a ``None`` item is refused (rule 2.13).
"""

from __future__ import annotations

import asyncio
import types
import weakref
from collections import deque
from collections.abc import AsyncGenerator, Generator, Iterator
from itertools import islice
from operator import length_hint
from typing import Any, Generic, TypeVar, cast, final

import attrs

from .._core import (
    AsyncBoundary,
    AsyncBoundarySubscriber,
    Batching,
    DeferredSubscription,
    DemandWindow,
    MissingBackpressureError,
    Publisher,
    PulledSubscription,
    StageScan,
    StageState,
    Subscription,
    adopt,
    current_loop,
    items_at_hand,
    register_handle,
    replenish_threshold,
    report_late_error,
    require_not_none,
    stream_error,
)

__all__ = (
    "DEFAULT_PREFETCH",
    "IDLE",
    "PullSubscriber",
    "iterate_batches",
    "pull",
    "to_async_iterator",
)

T = TypeVar("T")

DEFAULT_PREFETCH = 256


@final
class _Idle:
    """Returned by `PullSubscriber.next` when its timeout passed without an item."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "IDLE"


IDLE = _Idle()


@types.coroutine
def _one_turn() -> Generator[None, None, None]:
    """What ``await asyncio.sleep(0)`` does (the task's step ends and the loop takes a turn),
    without the coroutine around it."""
    yield


def _time_out(waiter: asyncio.Future[bool]) -> None:
    if not waiter.done():
        waiter.set_result(True)


@final
@attrs.define(eq=False)
class PullSubscriber(AsyncBoundarySubscriber[T], Generic[T]):
    """Buffers at most *window* items for one async reader (`next`, `poll`, `take`, or
    ``async for`` over `items`)."""

    _window: int = 1
    _eager: bool = False
    """Request the window at subscribe time rather than when the reader first asks."""
    _batch: int = attrs.field(init=False)
    """The fewest items requested at a time while some are still in flight."""
    _capacity: int = attrs.field(init=False)
    """The most items the buffer may hold: the window, 0 once cancelled or ended (an item
    that finds the buffer full takes the slow path)."""
    _loop: asyncio.AbstractEventLoop | None = attrs.field(default=None, init=False)
    """Set when this stands in for an async boundary: requests go out from its callbacks."""
    _buffer: deque[T] = attrs.field(factory=deque, init=False)
    _demand: DemandWindow = attrs.field(factory=DemandWindow, init=False)
    """The upstream (until the stream ends), and what was asked of it and not taken by the
    reader yet: in flight or buffered, at most the window. An item that arrives stays in
    that count, so nothing is counted per item; the reader counts what it takes, a run at a
    time. Over a source at hand the upstream is a `PulledSubscription` without a loop: a
    request fills the buffer on the spot."""
    _ended: bool = attrs.field(default=False, init=False)
    _error: BaseException | None = attrs.field(default=None, init=False)
    _cancelled: bool = attrs.field(default=False, init=False)
    _state: StageState = attrs.field(default="active", init=False)
    """How it ended, kept for `scan_stage` (the error is raised once, the flags reset)."""
    _run: Iterator[T] = attrs.field(factory=lambda: iter(()), init=False)
    """The run `items` is handing out: taken from the buffer, not yet read (for `scan_stage`)."""
    _waiter: asyncio.Future[bool] | None = attrs.field(default=None, init=False)
    _ahead: asyncio.Handle | None = attrs.field(default=None, init=False)
    """The top-up `take` scheduled (*ahead*) for when the reader suspends."""

    def __attrs_post_init__(self) -> None:
        self._batch = replenish_threshold(self._window)
        self._capacity = self._window

    # -- Subscriber ---------------------------------------------------------------------

    def take_boundary(self, prefetch: int, replenish: int) -> bool:
        loop = current_loop()
        if loop is None or self._demand.upstream is not None or self._cancelled or self._ended:
            return False
        self._loop = loop
        self._window = self._capacity = prefetch
        self._batch = replenish if replenish > 0 else prefetch
        return True

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "2.13", "on_subscribe's subscription")
        demand = self._demand
        if demand.upstream is not None or self._cancelled:
            subscription.cancel()
            return
        loop = self._loop
        demand.upstream = (
            subscription if loop is None else DeferredSubscription(subscription, loop, self)
        )
        if self._eager:
            self._top_up(self._window)
        self._wake()  # a reader already waiting tops the window up

    def on_next(self, item: T) -> None:
        buffer = self._buffer
        if item is None or len(buffer) >= self._capacity:
            self._refuse(item)
            return
        buffer.append(item)
        if self._waiter is not None:
            self._wake()

    def on_items(self, items: list[T]) -> None:
        buffer = self._buffer
        if len(buffer) + len(items) > self._capacity:
            super().on_items(items)  # one by one: the window's check refuses the excess
            return
        buffer.extend(items)
        if self._waiter is not None:
            self._wake()

    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        if self._ended:  # a second terminal signal, or one after an overflow ended the stream
            report_late_error(error, self._loop)
            return
        self._error = stream_error(error)  # a StopAsyncIteration would end `async for` quietly
        self._finish()

    def on_complete(self) -> None:
        self._finish()

    # -- the reader's side --------------------------------------------------------------

    @property
    def window(self) -> int:
        """The most items requested or buffered at once."""
        return self._window

    @property
    def buffered(self) -> int:
        """Items received and not yet taken."""
        return len(self._buffer)

    def poll(self) -> T | _Idle:
        """The next item if one can be had without waiting (the window is topped up first,
        so a synchronous source delivers on the spot, unless this stands in for an async
        boundary), else `IDLE`."""
        buffer = self._buffer
        demand = self._demand
        if not buffer or self._window - demand.asked >= self._batch:  # else no top-up is due
            self._top_up(self._window)
            if not buffer:
                return IDLE
        demand.received()
        return buffer.popleft()

    def take(self, limit: int, *, ahead: bool = False) -> list[T]:
        """Up to *limit* items that can be had without waiting (possibly none), after topping
        the window up. With *ahead*, the window is topped up again for the items taken as
        soon as the caller suspends (from a loop callback), so the next ones come while it
        deals with these, e.g. awaits their write (still at most the window requested or
        buffered). Not before: a source that delivers on request would make them before
        these are dealt with, for nothing (they would wait, out of the cache, while these
        are written), and a caller back before that tops up itself."""
        window = self._window
        if not self._buffer or window - self._demand.asked >= self._batch:
            self._top_up(window)
        items = self._take(limit)
        if ahead and items:
            if self._loop is not None:
                self._top_up(window)  # in a boundary's place its requests wait for the loop
            elif self._ahead is None:
                self._ahead = asyncio.get_running_loop().call_soon(self._top_up_ahead)
        return items

    async def next(self, timeout: float | None = None) -> T | _Idle:
        """The next item; `IDLE` when *timeout* seconds pass without one.

        Calling it means the previous item is dealt with, so the window is topped up first.

        Raises:
            StopAsyncIteration: the stream completed or was cancelled.
            BaseException: the stream's error, after the buffered items.
        """
        item = self.poll()
        while item is IDLE:
            if not await self.wait(timeout):
                return IDLE
            item = self.poll()
        return item

    async def wait(self, timeout: float | None = None) -> bool:
        """Wait until an item is buffered; False when *timeout* passed first.

        Raises:
            StopAsyncIteration: the stream completed or was cancelled, nothing is buffered.
            BaseException: the stream's error, once nothing is buffered.
        """
        if self._buffer:
            return True
        demand = self._demand
        if demand.asked and demand.upstream is not None and self._loop is not None:
            # In a boundary's place, requests go out from loop callbacks: the loop's next turn
            # sends the pending one, and an upstream at hand (or synchronous) fills the buffer
            # in it, so one turn often does without a future to wait on.
            try:
                await _one_turn()
            except asyncio.CancelledError:
                self.cancel()
                raise
            if self._buffer:
                return True
        if self._ended or self._cancelled:
            error, self._error = self._error, None
            if error is not None:
                raise error
            raise StopAsyncIteration
        loop = asyncio.get_running_loop()
        waiter = self._waiter = loop.create_future()
        timer = None if timeout is None else loop.call_later(timeout, _time_out, waiter)
        try:
            timed_out = await waiter
        except asyncio.CancelledError:
            self.cancel()
            raise
        finally:
            if timer is not None:
                timer.cancel()
        if timed_out:
            self._waiter = None
            return False
        return True

    async def items(self) -> AsyncGenerator[T, None]:
        """The items as an async generator: a buffered item costs a resumption, no coroutine
        or future of its own. Unlike `next`, an item counts as dealt with once it is taken
        (prefetch): what is buffered is taken in runs (a copy, no call per item), and where
        the window is due a top-up within a run, the reader makes it as it comes to that
        item, so that it has the next ones asked for while it works on it (the rest of the
        run still counts as held: the window bounds what is handed out too). Closing it (or
        leaving an ``async for`` early) cancels."""
        buffer = self._buffer
        try:
            while buffer or await self._more():
                run, before = self._take_run()
                rest = self._run = iter(run)
                if before < len(run):
                    for item in islice(rest, before):
                        yield item
                    self._top_up(self._window - length_hint(rest) + 1)
                for item in rest:
                    yield item
        finally:
            self.cancel()

    async def slices(self, most: int) -> AsyncGenerator[list[T], None]:
        """The items as lists of what is buffered when the reader comes back for more, at
        most *most* each, never waiting for one to fill: what ``async for`` over a ``batch``
        reads when this buffer takes its place (`iterate_batches`). A list costs one
        resumption and a copy of the buffer, nothing per item; its items count as dealt with
        once it is taken. Closing it cancels."""
        buffer = self._buffer
        window = self._window
        try:
            while buffer or await self._more():
                run = self._take(most)
                self._top_up(window)
                yield run
        finally:
            self.cancel()

    def scan_stage(self) -> StageScan:
        """The reader's buffer and its bound; in place of an async boundary it is that
        boundary's stage too. What is on its way is the demand of the stage upstream: the
        reader's side counts its items a batch ahead, so no exact figure is kept here."""
        return StageScan(
            operator="async_iterator" if self._loop is None else "publish_on → async_iterator",
            state=self._state,
            buffered=len(self._buffer) + length_hint(self._run),
            capacity=self._window,
            error=self._error,
            upstream=self._demand.upstream,
            loop=self._loop,
        )

    def cancel(self) -> None:
        """Cancel upstream (if still running) and drop what is buffered; idempotent."""
        if self._cancelled:
            return
        if self._state == "active":
            self._state = "cancelled"
        self._cancelled = True
        self._capacity = 0
        ahead, self._ahead = self._ahead, None
        if ahead is not None:
            ahead.cancel()
        self._buffer.clear()
        self._run = iter(())
        demand = self._demand
        upstream, demand.upstream = demand.upstream, None
        if upstream is not None and not self._ended:
            upstream.cancel()
        self._wake()

    # -- internals ----------------------------------------------------------------------

    def _top_up_ahead(self) -> None:
        self._ahead = None
        self._top_up(self._window)

    async def _more(self) -> bool:
        """With nothing buffered: top the window up, wait for an item if that brought none;
        False at the end of the stream (its error raised, after the items)."""
        self._top_up(self._window)
        if not self._buffer:
            try:
                await self.wait()
            except StopAsyncIteration:
                return False
        return True

    def _take_run(self) -> tuple[list[T], int]:
        """What `items` hands out next, and how many of its items come before the one whose
        taking frees a batch of the window (all of them when none does): at most a batch
        after that one, where the next would be due. The reader has read every earlier run."""
        batch = self._batch
        due = batch - self._window + self._demand.asked  # that item's place in the buffer
        first = due if due > 1 else 1
        return self._take(first + batch - 1), first - 1

    def _take(self, most: int) -> list[T]:
        """Up to *most* buffered items, taken at once (no call per item) and counted as
        taken."""
        buffer = self._buffer
        run = list(buffer)
        buffer.clear()
        if len(run) > most:
            buffer.extend(run[most:])
            del run[most:]
        self._demand.received(len(run))
        return run

    def _top_up(self, wanted: int) -> None:
        """Ask for what is missing for *wanted* items to be requested and not taken: in
        batches, or whatever is missing once nothing is (the library's one replenish policy,
        `DemandWindow.top_up`)."""
        demand = self._demand
        demand.top_up(wanted, self._batch if demand.asked else 1)

    def _refuse(self, item: T) -> None:
        """An item that is None (rule 2.13), late (cancelled, ended) or beyond the window."""
        require_not_none(item, "2.13", "on_next's item")
        if self._cancelled or self._ended:
            return
        demand = self._demand
        upstream, demand.upstream = demand.upstream, None
        if upstream is not None:
            upstream.cancel()
        self._error = MissingBackpressureError(
            f"rule 1.1: upstream sent more than the {self._window} items requested"
        )
        self._finish()

    def _finish(self) -> None:
        self._state = "completed" if self._error is None else "failed"
        self._ended = True
        self._capacity = 0
        self._demand.upstream = None
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(False)

    def _pull_from(self, items: Iterator[T]) -> None:
        """Take *items*, the source's items at hand (`items_at_hand`), as the upstream: each
        request pulls them in one step, where a subscribed synchronous source would emit them
        one by one. Nothing is pulled before the reader asks, eager or not."""
        self._demand.upstream = PulledSubscription(items, self, None)


def pull(publisher: Publisher[T], *, window: int = 1, eager: bool = False) -> PullSubscriber[T]:
    """Subscribe a `PullSubscriber` of *window* to *publisher* (adopted at the loop boundary).

    Args:
        publisher: the source; subscribed immediately.
        window: the most items requested or buffered at once; behind an async boundary
            (``publish_on``), which the subscriber takes the place of, the boundary's
            ``buffer_size`` instead.
        eager: request the window at once rather than when the reader first asks.

    Raises:
        ValueError: *window* is not positive.
    """
    if window <= 0:
        raise ValueError(f"window must be > 0, got {window}")
    subscriber = PullSubscriber[T](window, eager)
    at_hand = items_at_hand(publisher)
    if at_hand is None:
        adopt(publisher).subscribe(subscriber)
    else:
        subscriber._pull_from(at_hand)  # by the reader, a window at a time
    return subscriber


def to_async_iterator(
    publisher: Publisher[T], *, prefetch: int = DEFAULT_PREFETCH
) -> AsyncGenerator[T, None]:
    """Iterate any spec `Publisher` with ``async for`` (``aclose()`` cancels it).

    Args:
        publisher: the source; subscribed immediately.
        prefetch: the demand window; the buffer never holds more than this many items.
            Behind an async boundary (``publish_on``) the boundary's ``buffer_size`` is the
            window: the buffer takes the boundary's place.
    """
    if prefetch <= 0:
        raise ValueError(f"prefetch must be > 0, got {prefetch}")
    subscriber = pull(publisher, window=prefetch, eager=True)
    iterator = subscriber.items()
    _cancel_when_gone(iterator, subscriber)
    register_handle(iterator, subscriber)
    return iterator


def iterate_batches(source: Publisher[T]) -> AsyncGenerator[T, None] | None:
    """What ``async for`` over *source* reads when it is `Batching` (``batch``) right after
    an `AsyncBoundary` (``publish_on``) or over a source whose items are at hand: a
    `PullSubscriber` that holds the items (taking the boundary's place and window, or pulling
    a window of the batch's size at a time) and hands out slices of what it holds
    (`PullSubscriber.slices`), so that no item costs a signal. ``None`` for any other source
    (the caller subscribes), or without a running loop.
    """
    if not isinstance(source, Batching) or current_loop() is None:
        return None
    upstream, most = source.batched()
    subscriber = PullSubscriber[Any](most, True)
    at_hand = items_at_hand(upstream)
    if at_hand is not None:
        subscriber._pull_from(at_hand)  # by the reader, a window at a time
    elif isinstance(upstream, AsyncBoundary):
        upstream.subscribe(subscriber)  # which lets the buffer take its place
    else:
        return None
    iterator = subscriber.slices(most)
    _cancel_when_gone(iterator, subscriber)
    return cast("AsyncGenerator[T, None]", iterator)  # (a Batching publisher's items are lists)


_GUARDS: set[weakref.ref[AsyncGenerator[Any, None]]] = set()
"""Weak references to the live iterators of `to_async_iterator` and `iterate_batches`, until
each is gone."""


def _cancel_when_gone(iterator: AsyncGenerator[T, None], subscriber: PullSubscriber[T]) -> None:
    """Cancel *subscriber* once *iterator* is gone: one dropped before its first item never
    runs its ``finally``."""

    def gone(ref: weakref.ref[AsyncGenerator[T, None]]) -> None:
        _GUARDS.discard(ref)
        subscriber.cancel()

    _GUARDS.add(weakref.ref(iterator, gone))
