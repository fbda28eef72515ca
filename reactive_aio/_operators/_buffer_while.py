"""``buffer_while``: lists of consecutive items for which *predicate* is true.

An item failing the predicate closes the open list and is dropped (Reactor's
``bufferWhile``); several failing items in a row emit no empty lists. The last list is
emitted when the stream completes.

Backpressure: ``request(n)`` lists asks upstream for *n* items; every item that does not emit
a list is replaced by a ``request(1)`` upstream (none once demand is unbounded). The list
left at completion is emitted within demand, then completion follows.
Errors: upstream errors pass through (the open list is dropped); if *predicate* raises,
upstream is cancelled first, then ``on_error``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar, final

import attrs

from .._core import Publisher, Subscriber, require_not_none
from ._buffer_until import SplitSubscriber

__all__ = ("BufferWhilePublisher",)

T = TypeVar("T")


@final
@attrs.frozen
class BufferWhilePublisher(Publisher[list[T]], Generic[T]):
    """What `Flux.buffer_while` returns."""

    source: Publisher[T]
    predicate: Callable[[T], object]

    def subscribe(self, subscriber: Subscriber[list[T]]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(_BufferWhileSubscriber(subscriber, predicate=self.predicate))


@final
@attrs.define(eq=False)
class _BufferWhileSubscriber(SplitSubscriber[T]):
    def _cut(self, item: T, matches: bool) -> bool:
        if matches:
            self._items.append(item)
            return False
        return self._emit()
