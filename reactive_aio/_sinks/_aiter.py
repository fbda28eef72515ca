"""``async for x in flux``, `to_async_iterator`, and the pull buffer every async consumer reads.

Backpressure: a `PullSubscriber` holds at most *window* items, requested or buffered. A writer
(`PullSubscriber.next`, `poll`, `take`) has the window topped up when it comes back for more
after dealing with earlier items, so a window of 1 asks for the next item only once the
previous one was written; ``async for`` requests a window of ``prefetch`` items up front and
tops it up as items are taken. Either way in one batch once three quarters of the window are
free (`replenish_threshold`, the library's one policy), or once nothing is in flight.
Behind an async boundary (``publish_on``) the buffer takes the boundary's place (async
fusion, see `fuse_boundary`): it is subscribed to the boundary's source, holds at most the
boundary's ``buffer_size`` items and re-requests in the boundary's batches, every request made
from a loop callback, so upstream never emits on the reader's stack.
When the source's items are at hand (a synchronous source, through its fused maps, see
`items_at_hand`), the buffer pulls them itself, a window at a time, where it would request
them: no subscription, no signal per item.
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
import weakref
from collections import deque
from collections.abc import AsyncGenerator, Iterator
from itertools import islice
from typing import Any, Generic, TypeVar, final

import attrs

from .._core import (
    AsyncBoundarySubscriber,
    DeferredSubscription,
    MissingBackpressureError,
    Publisher,
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

__all__ = ("DEFAULT_PREFETCH", "IDLE", "PullSubscriber", "pull", "to_async_iterator")

T = TypeVar("T")

DEFAULT_PREFETCH = 256


@final
class _Idle:
    """Returned by `PullSubscriber.next` when its timeout passed without an item."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "IDLE"


IDLE = _Idle()


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
    _upstream: Subscription | None = attrs.field(default=None, init=False)
    _at_hand: Iterator[T] | None = attrs.field(default=None, init=False)
    """The source's items when they are at hand (`items_at_hand`): pulled instead of requested."""
    _requested: int = attrs.field(default=0, init=False)
    _taken: int = attrs.field(default=0, init=False)
    """Requested minus taken is what is in flight or buffered: at most the window."""
    _refill_at: int = attrs.field(default=0, init=False)
    """`_taken` at which a batch of the window is free again."""
    _ended: bool = attrs.field(default=False, init=False)
    _error: BaseException | None = attrs.field(default=None, init=False)
    _cancelled: bool = attrs.field(default=False, init=False)
    _state: StageState = attrs.field(default="active", init=False)
    """How it ended, kept for `scan_stage` (the error is raised once, the flags reset)."""
    _waiter: asyncio.Future[bool] | None = attrs.field(default=None, init=False)

    def __attrs_post_init__(self) -> None:
        self._batch = replenish_threshold(self._window)
        self._capacity = self._window

    # -- Subscriber ---------------------------------------------------------------------

    def take_boundary(self, prefetch: int, replenish: int) -> bool:
        loop = current_loop()
        if loop is None or self._upstream is not None or self._cancelled or self._ended:
            return False
        self._loop = loop
        self._window = self._capacity = prefetch
        self._batch = replenish if replenish > 0 else prefetch
        return True

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "2.13", "on_subscribe's subscription")
        if self._upstream is not None or self._cancelled:
            subscription.cancel()
            return
        loop = self._loop
        self._upstream = (
            subscription if loop is None else DeferredSubscription(subscription, loop, self)
        )
        if self._eager:
            self._top_up()
        self._wake()  # a reader already waiting tops the window up

    def on_next(self, item: T) -> None:
        buffer = self._buffer
        if item is None or len(buffer) >= self._capacity:
            self._refuse(item)
            return
        buffer.append(item)
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
        if self._taken >= self._refill_at or not buffer:
            self._top_up()
            if not buffer:
                return IDLE
        self._taken += 1
        return buffer.popleft()

    def take(self, limit: int, *, ahead: bool = False) -> list[T]:
        """Up to *limit* items that can be had without waiting (possibly none), after topping
        the window up. With *ahead*, the window is topped up again for the items taken, so
        the next ones come while the caller deals with these (still at most the window
        requested or buffered)."""
        buffer = self._buffer
        if self._taken >= self._refill_at or not buffer:
            self._top_up()
        count = min(limit, len(buffer))
        self._taken += count
        items = [buffer.popleft() for _ in range(count)]
        if ahead and self._taken >= self._refill_at:
            self._top_up()
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
        (prefetch). Closing it (or leaving an ``async for`` early) cancels."""
        buffer = self._buffer
        popleft = buffer.popleft
        try:
            while True:
                room = self._refill_at - self._taken  # taken before the window needs a top-up
                if room > 1 and buffer:
                    # Counted at once, so a buffered item costs a popleft and a resumption.
                    count = min(len(buffer), room - 1)
                    self._taken += count
                    for _ in range(count):
                        if not buffer:  # cancelled meanwhile
                            break
                        yield popleft()
                    continue
                if buffer:
                    # This one reaches the top-up point and leaves the window at once:
                    # prefetch the next ones while the reader works on it.
                    self._taken += 1
                    item = popleft()
                    self._top_up()
                    yield item
                    continue
                self._top_up()
                if not buffer:
                    try:
                        await self.wait()
                    except StopAsyncIteration:
                        return
        finally:
            self.cancel()

    def scan_stage(self) -> StageScan:
        """The reader's buffer and its bound; in place of an async boundary it is that
        boundary's stage too. What is on its way is the demand of the stage upstream: the
        reader's side counts its items a batch ahead, so no exact figure is kept here."""
        return StageScan(
            operator="async_iterator" if self._loop is None else "publish_on → async_iterator",
            state=self._state,
            buffered=len(self._buffer),
            capacity=self._window,
            error=self._error,
            upstream=self._upstream,
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
        self._buffer.clear()
        upstream, self._upstream = self._upstream, None
        if upstream is not None and not self._ended:
            upstream.cancel()
        self._at_hand = None
        self._wake()

    # -- internals ----------------------------------------------------------------------

    def _top_up(self) -> None:
        upstream = self._upstream
        if upstream is None:
            if self._at_hand is not None:
                self._pull_at_hand(self._at_hand)
            return
        window = self._window
        held = self._requested - self._taken
        missing = window - held
        # In batches, or whatever is missing once nothing is in flight any more.
        if missing > 0 and (missing >= self._batch or held == len(self._buffer)):
            self._requested += missing
            upstream.request(missing)
        self._refill_at = self._requested - window + self._batch

    def _pull_at_hand(self, items: Iterator[T]) -> None:
        """Top the window up from the items at hand: what a subscribed synchronous source
        would emit on request, without a signal per item."""
        buffer = self._buffer
        window = self._window
        missing = window - len(buffer)
        if missing <= 0:
            return
        before = len(buffer)
        try:
            buffer.extend(islice(items, missing))  # keeps what came before a failure
        except Exception as exc:
            self._requested += len(buffer) - before
            self._error = stream_error(exc)
            self._finish()
            return
        pulled = len(buffer) - before
        self._requested += pulled
        self._refill_at = self._requested - window + self._batch
        if pulled < missing:
            self._finish()

    def _refuse(self, item: T) -> None:
        """An item that is None (rule 2.13), late (cancelled, ended) or beyond the window."""
        require_not_none(item, "2.13", "on_next's item")
        if self._cancelled or self._ended:
            return
        upstream, self._upstream = self._upstream, None
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
        self._upstream = None
        self._at_hand = None
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(False)


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
        subscriber._at_hand = at_hand  # pulled by the reader, a window at a time
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


_GUARDS: set[weakref.ref[AsyncGenerator[Any, None]]] = set()
"""Weak references to the live iterators of `to_async_iterator`, until each is gone."""


def _cancel_when_gone(iterator: AsyncGenerator[T, None], subscriber: PullSubscriber[T]) -> None:
    """Cancel *subscriber* once *iterator* is gone: one dropped before its first item never
    runs its ``finally``."""

    def gone(ref: weakref.ref[AsyncGenerator[T, None]]) -> None:
        _GUARDS.discard(ref)
        subscriber.cancel()

    _GUARDS.add(weakref.ref(iterator, gone))
