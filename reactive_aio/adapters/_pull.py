"""`PullSubscriber`: a publisher consumed by one async writer, one window at a time.

Backpressure: full; the subscriber holds at most *window* items (requested or buffered) and
tops the window up only when the writer comes back for the next item, i.e. after its
previous write completed. With ``window=1`` the next item is requested only once the previous
one was written: the transport's drain sets the pace.
Errors: the stream's error is raised from `PullSubscriber.next` after the buffered items.
Loop: `pull` adopts a publisher of another library at the loop boundary, so its signals
reach the subscriber inside the loop it was created on, whatever thread sends them;
`PullSubscriber.cancel` may be called from anywhere on that loop.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar, final

import attrs

from .._core import Publisher, Subscriber, Subscription, adopt, logger, require_not_none

__all__ = ("IDLE", "PullSubscriber", "pull", "write_all")

T = TypeVar("T")
C = TypeVar("C")


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
class PullSubscriber(Subscriber[T], Generic[T]):
    """Buffers at most *window* items for an async consumer that asks with `next`."""

    _window: int = 1
    _buffer: deque[T] = attrs.field(factory=deque, init=False)
    _upstream: Subscription | None = attrs.field(default=None, init=False)
    _outstanding: int = attrs.field(default=0, init=False)
    """Requested from upstream and not yet received."""
    _ended: bool = attrs.field(default=False, init=False)
    _error: BaseException | None = attrs.field(default=None, init=False)
    _cancelled: bool = attrs.field(default=False, init=False)
    _waiter: asyncio.Future[bool] | None = attrs.field(default=None, init=False)

    # -- Subscriber ---------------------------------------------------------------------

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "2.13", "on_subscribe's subscription")
        if self._upstream is not None or self._cancelled:
            subscription.cancel()
            return
        self._upstream = subscription
        self._wake()  # a writer already waiting in next() tops the window up

    def on_next(self, item: T) -> None:
        require_not_none(item, "2.13", "on_next's item")
        if self._cancelled:
            return
        self._outstanding -= 1
        self._buffer.append(item)
        self._wake()

    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        self._error = error
        self._finish()

    def on_complete(self) -> None:
        self._finish()

    # -- the writer's side --------------------------------------------------------------

    @property
    def buffered(self) -> int:
        """Items received and not yet taken."""
        return len(self._buffer)

    def poll(self) -> T | _Idle:
        """The next item if one can be had without waiting (the window is topped up first,
        so a synchronous source delivers on the spot), else `IDLE`."""
        buffer = self._buffer
        if not buffer:
            self._top_up()
            if not buffer:
                return IDLE
        return buffer.popleft()

    async def next(self, timeout: float | None = None) -> T | _Idle:
        """The next item; `IDLE` when *timeout* seconds pass without one.

        Calling it means the previous item is dealt with, so the window is topped up first.

        Raises:
            StopAsyncIteration: the stream completed or was cancelled.
            BaseException: the stream's error, after the buffered items.
        """
        buffer = self._buffer
        if not buffer:
            self._top_up()
        while not buffer:
            if self._ended or self._cancelled:
                error, self._error = self._error, None
                if error is not None:
                    raise error
                raise StopAsyncIteration
            loop = asyncio.get_running_loop()
            waiter = self._waiter = loop.create_future()
            timer = None if timeout is None else loop.call_later(timeout, _time_out, waiter)
            timed_out = await waiter
            if timer is not None:
                timer.cancel()
            if timed_out:
                self._waiter = None
                return IDLE
            self._top_up()
        return buffer.popleft()

    def cancel(self) -> None:
        """Cancel upstream (if still running) and drop what is buffered; idempotent."""
        if self._cancelled:
            return
        self._cancelled = True
        self._buffer.clear()
        upstream, self._upstream = self._upstream, None
        if upstream is not None and not self._ended:
            upstream.cancel()
        self._wake()

    # -- internals ----------------------------------------------------------------------

    def _top_up(self) -> None:
        upstream = self._upstream
        if upstream is None or self._ended:
            return
        missing = self._window - self._outstanding - len(self._buffer)
        # Large windows refill in batches of at least half, small ones item by item.
        if missing > 0 and (missing << 1 >= self._window or self._outstanding == 0):
            self._outstanding += missing
            upstream.request(missing)

    def _finish(self) -> None:
        self._ended = True
        self._upstream = None
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(False)


def pull(publisher: Publisher[T], *, window: int = 1) -> PullSubscriber[T]:
    """Subscribe a `PullSubscriber` of *window* to *publisher* and return it.

    Raises:
        ValueError: *window* is not positive.
    """
    if window <= 0:
        raise ValueError(f"window must be > 0, got {window}")
    subscriber = PullSubscriber[T](window)
    adopt(publisher).subscribe(subscriber)
    return subscriber


async def write_all(
    subscriber: PullSubscriber[T],
    encode: Callable[[T], C],
    write: Callable[[C], Awaitable[object]],
    *,
    idle: C | None = None,
    idle_after: float | None = None,
    what: str = "stream",
) -> BaseException | None:
    """Write every item of *subscriber* with *write*, one at a time, and return how it ended.

    The next item is asked for only after ``write`` returned, so the writer's drain is the
    backpressure. When *idle_after* seconds pass without an item, *idle* is written instead
    (keep-alive). Whatever way this ends (an error of *write*, cancellation), the
    subscription is cancelled.

    Returns:
        None when the stream completed (or was cancelled); the stream's error, or the error
        *encode* raised, after logging it to the ``reactive_aio`` logger.
    """
    try:
        poll = subscriber.poll
        next_item = subscriber.next
        written = 0
        while True:
            try:
                item = poll()  # no coroutine per item while the source keeps up
                if item is IDLE:
                    item = await next_item(idle_after)
                chunk = idle if item is IDLE else encode(item)  # type: ignore[arg-type]
            except StopAsyncIteration:
                return None
            except Exception as exc:
                subscriber.cancel()  # an encode failure must stop the source as well
                logger.error("%s failed: %r", what, exc, exc_info=exc)
                return exc
            await write(chunk)  # type: ignore[arg-type]
            written += 1
            if not written & 63:
                # A synchronous source and a writer that never suspends (a server that drops
                # writes after a disconnect) would otherwise starve the loop, and with it the
                # task that notices the disconnect.
                await asyncio.sleep(0)
    finally:
        subscriber.cancel()
