"""``Flux.from_async_iterable``: the items of an async iterable, pulled as demand allows.

Backpressure: full; one task per subscriber awaits ``__anext__`` only while there is
unfulfilled demand, so at most one item is ever held.
Errors: a second subscriber of a one-shot iterator (an async generator) gets ``on_error``
naming ``Flux.defer``; an exception from the iterator ends the stream with ``on_error`` (also
`asyncio.CancelledError` when the stream was not cancelled); a ``None`` item
ends it with ``on_error(NullSignalError)``. On cancel the pull task is cancelled and the
iterator closed with ``aclose()``. A fold (``reduce``, ``to_list``, …) or an ``async for`` over
it, or over maps and filters after it, subscribes nothing: the awaiting task reads the
iterator and runs the stages inline (see `AsyncSource`), and closes it as a cancel does when
it stops early, fails or is cancelled.
Loop: needs a running event loop at subscribe time; the pull task runs on it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, AsyncIterator
from typing import Generic, TypeVar, final

import attrs

from .._core import (
    AWAITED_NULL,
    AsyncSource,
    DrainSubscription,
    NullSignalError,
    Publisher,
    Subscriber,
    cancelled_elsewhere,
    cancelling_this_task,
    close_async_iterator,
    read_once_error,
    require_not_none,
)

__all__ = ("AsyncIterablePublisher",)

T = TypeVar("T")

_EMPTY: object = object()


@final
@attrs.define(eq=False)
class AsyncIterablePublisher(Publisher[T], AsyncSource[T], Generic[T]):
    """Calls ``aiter()`` on each subscribe; cold when the iterable can be iterated again. A
    one-shot iterator (an async generator, anything whose ``aiter()`` is itself) serves its
    first subscriber, and every later one gets ``on_error`` saying so. An `AsyncSource`: a
    fold or an ``async for`` over it (and the maps and filters after it) reads the iterator
    in its own loop instead of subscribing (`fold_at_hand`, `iterate_awaiting`), under the
    same one-shot rule."""

    iterable: AsyncIterable[T]
    _read: bool = attrs.field(default=False, init=False)
    """A one-shot iterator was handed out."""

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        subscription = _AsyncIterableSubscription[T](subscriber)
        if subscription._loop is None:
            subscription.fault = RuntimeError("from_async_iterable needs a running event loop")
        else:
            try:
                subscription.iterator = self.async_iterator()
            except Exception as exc:
                subscription.fault = exc
        subscription.start()

    def async_iterator(self) -> AsyncIterator[T]:
        if self._read:
            raise read_once_error("Flux.from_async_iterable", "__aiter__", self.iterable)
        iterator = aiter(self.iterable)
        self._read = iterator is self.iterable  # one-shot: whoever comes next gets an error
        return iterator


@final
@attrs.define(eq=False)
class _AsyncIterableSubscription(DrainSubscription[T]):
    iterator: AsyncIterator[T] | None = attrs.field(default=None, init=False)
    fault: BaseException | None = attrs.field(default=None, init=False)
    _item: object = attrs.field(default=_EMPTY, init=False)
    _finished: bool = attrs.field(default=False, init=False)
    _task: asyncio.Task[None] | None = attrs.field(default=None, init=False)
    _wake: asyncio.Future[None] | None = attrs.field(default=None, init=False)

    def _emit(self, limit: int) -> int:
        if self.fault is not None:
            self._error(self.fault)
            return 0
        item = self._item
        if item is not _EMPTY:
            if limit == 0:
                return 0
            self._item = _EMPTY
            downstream = self._downstream
            assert downstream is not None
            downstream.on_next(item)  # type: ignore[arg-type]
            return 1
        if self._finished:
            self._complete()
        elif limit:
            self._want_more()
        return 0

    def _want_more(self) -> None:
        wake = self._wake
        if wake is not None:
            self._wake = None
            if not wake.done():
                wake.set_result(None)
        elif self._task is None:
            assert self._loop is not None
            self._task = self._loop.create_task(self._pull())

    async def _pull(self) -> None:
        iterator = self.iterator
        assert iterator is not None
        assert self._loop is not None
        try:
            while not self._done:
                if self._requested == 0:
                    self._wake = self._loop.create_future()
                    await self._wake
                    continue
                try:
                    item = await iterator.__anext__()
                except StopAsyncIteration:
                    self._finished = True
                except Exception as exc:
                    self.fault = exc
                except asyncio.CancelledError as exc:
                    if cancelling_this_task():
                        raise
                    self.fault = cancelled_elsewhere("the async iterable", exc)
                else:
                    if item is None:
                        self.fault = NullSignalError(AWAITED_NULL)
                    else:
                        self._item = item
                self._drain()
                if self._finished or self.fault is not None:
                    return
        finally:
            self.iterator = None
            await close_async_iterator(iterator)

    def _release(self) -> None:
        task = self._task
        if task is None:
            iterator = self.iterator
            if iterator is not None and self._loop is not None and not self._loop.is_closed():
                self.iterator = None
                self._task = self._loop.create_task(close_async_iterator(iterator))
        elif task is not asyncio.current_task(self._loop) and not task.done():
            task.cancel()
