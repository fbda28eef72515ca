"""``Flux.from_async_iterable``: the items of an async iterable, pulled as demand allows.

Backpressure: full; one task per subscriber awaits ``__anext__`` only while there is
unfulfilled demand, so no item is ever held; the maps and filters right after it run inside
that task (an item a filter drops costs no demand). A fold (``reduce``, ``to_list``, …) or an
``async for`` over it, or over maps and filters after it, subscribes nothing: the awaiting
task reads the iterator itself, with the stages inline (see `AsyncSource`).
Errors: a second subscriber of a one-shot iterator (an async generator) gets ``on_error``
naming ``Flux.defer``; an exception from the iterator ends the stream with ``on_error`` (also
`asyncio.CancelledError` when the stream was not cancelled); a ``None`` item
ends it with ``on_error(NullSignalError)``. On cancel the pull task is cancelled and the
iterator closed with ``aclose()``; a fold or ``async for`` that stops early, fails or is
cancelled closes it too.
Loop: needs a running event loop at subscribe time; the pull task runs on it.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from typing import Generic, TypeVar, final

import attrs

from .._core import AsyncSource, read_once_error

__all__ = ("AsyncIterablePublisher",)

T = TypeVar("T")


@final
@attrs.define(eq=False)
class AsyncIterablePublisher(AsyncSource[T], Generic[T]):
    """Calls ``aiter()`` on each subscribe; cold when the iterable can be iterated again. A
    one-shot iterator (an async generator, anything whose ``aiter()`` is itself) serves its
    first subscriber, and every later one gets ``on_error`` saying so; so does a later fold or
    ``async for`` (an `AsyncSource`: they read the iterator themselves)."""

    iterable: AsyncIterable[T]
    _read: bool = attrs.field(default=False, init=False)
    """A one-shot iterator was handed out."""

    def async_iterator(self) -> AsyncIterator[T]:
        if self._read:
            raise read_once_error("Flux.from_async_iterable", "__aiter__", self.iterable)
        iterator = aiter(self.iterable)
        self._read = iterator is self.iterable  # one-shot: whoever comes next gets an error
        return iterator
