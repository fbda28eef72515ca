"""``async for x in flux`` and `to_async_iterator`: any publisher as an async iterator.

Backpressure: requests a ``prefetch`` window up front and replenishes it in batches once
three quarters of it were consumed, so the buffer never holds more than was requested.
Errors: the stream's error is raised from ``__anext__`` after the buffered items.
Loop: a publisher of another library is adopted at the loop boundary, so its signals reach
the buffer inside the consuming loop, whatever thread sends them. Leaving an ``async for``
early (or dropping the iterator, or ``aclose()``) cancels the subscription.
Rules: the consumer's task does the work, so the publisher is never held up by it (rule
2.2); a signal from another thread is handed to the consuming loop before it is looked at
(rule 2.11).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Awaitable
from typing import Generic, TypeVar, final

import attrs

from .._core import Publisher, Subscriber, Subscription, adopt, require_not_none

__all__ = ("to_async_iterator",)

T = TypeVar("T")

DEFAULT_PREFETCH = 256


@final
@attrs.define(eq=False)
class _BufferingSubscriber(Subscriber[T], Generic[T]):
    """Holds at most the outstanding demand; the iterator handle reads from it."""

    _prefetch: int
    _buffer: deque[T] = attrs.field(factory=deque, init=False)
    _upstream: Subscription | None = attrs.field(default=None, init=False)
    _ended: bool = attrs.field(default=False, init=False)
    _error: BaseException | None = attrs.field(default=None, init=False)
    _waiter: asyncio.Future[None] | None = attrs.field(default=None, init=False)
    _consumed: int = attrs.field(default=0, init=False)
    _cancelled: bool = attrs.field(default=False, init=False)

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "2.13", "on_subscribe's subscription")
        if self._upstream is not None or self._cancelled:
            subscription.cancel()
            return
        self._upstream = subscription
        subscription.request(self._prefetch)

    def on_next(self, item: T) -> None:
        require_not_none(item, "2.13", "on_next's item")
        self._buffer.append(item)
        self._wake()

    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        self._error = error
        self._ended = True
        self._upstream = None
        self._wake()

    def on_complete(self) -> None:
        self._ended = True
        self._upstream = None
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    async def next(self) -> T:
        buffer = self._buffer
        while not buffer:
            if self._ended or self._cancelled:
                error = self._error
                if error is not None:
                    self._error = None
                    raise error
                raise StopAsyncIteration
            waiter = self._waiter = asyncio.get_running_loop().create_future()
            try:
                await waiter
            except asyncio.CancelledError:
                self.cancel()
                raise
        item = buffer.popleft()
        self._consumed += 1
        prefetch = self._prefetch
        if self._consumed >= prefetch - (prefetch >> 2):
            upstream = self._upstream
            if upstream is not None:
                upstream.request(self._consumed)
            self._consumed = 0
        return item

    def cancel(self) -> None:
        if self._cancelled:
            return
        self._cancelled = True
        self._buffer.clear()
        upstream, self._upstream = self._upstream, None
        if upstream is not None and not self._ended:
            upstream.cancel()
        self._wake()


@final
class _AsyncIteratorHandle(AsyncIterator[T]):
    """What users hold. The publisher only references the buffering subscriber, so when the
    handle is dropped (an ``async for`` left early) ``__del__`` cancels the subscription."""

    __slots__ = ("_subscriber",)

    def __init__(self, subscriber: _BufferingSubscriber[T]) -> None:
        self._subscriber = subscriber

    def __aiter__(self) -> _AsyncIteratorHandle[T]:
        return self

    def __anext__(self) -> Awaitable[T]:
        return self._subscriber.next()

    async def aclose(self) -> None:
        """Cancel the subscription; the iterator then ends."""
        self._subscriber.cancel()

    def __del__(self) -> None:
        self._subscriber.cancel()


def to_async_iterator(
    publisher: Publisher[T], *, prefetch: int = DEFAULT_PREFETCH
) -> AsyncIterator[T]:
    """Iterate any spec `Publisher` with ``async for``.

    Args:
        publisher: the source; subscribed immediately.
        prefetch: the demand window; the buffer never holds more than this many items.
    """
    if prefetch <= 0:
        raise ValueError(f"prefetch must be > 0, got {prefetch}")
    subscriber = _BufferingSubscriber[T](prefetch)
    adopt(publisher).subscribe(subscriber)
    return _AsyncIteratorHandle(subscriber)
