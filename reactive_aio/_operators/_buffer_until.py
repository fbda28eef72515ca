"""``buffer_until``: lists of items, each closed by an item for which *predicate* is true.

The closing item ends its list (Reactor's ``bufferUntil``); with ``cut_before=True`` it
starts the next list instead. The last list, shorter, is emitted when the stream completes.

Backpressure: ``request(n)`` lists asks upstream for *n* items; every item that does not emit
a list is replaced by a ``request(1)`` upstream (none once demand is unbounded), so upstream
is never asked for more items than the lists requested need. The list left at completion is
emitted within demand, then completion follows.
Errors: upstream errors pass through (the open list is dropped); if *predicate* raises,
upstream is cancelled first, then ``on_error``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar, final

import attrs

from .._core import (
    MAX_DEMAND,
    Publisher,
    Subscriber,
    TailSubscriber,
    produced,
    require_not_none,
)

__all__ = ("BufferUntilPublisher", "SplitSubscriber")

T = TypeVar("T")


@final
@attrs.frozen
class BufferUntilPublisher(Publisher[list[T]], Generic[T]):
    """What `Flux.buffer_until` returns."""

    source: Publisher[T]
    predicate: Callable[[T], object]
    cut_before: bool = False

    def subscribe(self, subscriber: Subscriber[list[T]]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(
            _BufferUntilSubscriber(subscriber, predicate=self.predicate, cut_before=self.cut_before)
        )


@attrs.define(eq=False)
class SplitSubscriber(TailSubscriber[T, list[T]], Generic[T]):
    """Cuts the items into lists by a predicate: one emitted list per item asked upstream,
    every item that emits none replaced by a ``request(1)``."""

    _predicate: Callable[[T], object] = attrs.field(kw_only=True, alias="predicate")
    _items: list[T] = attrs.field(factory=list, init=False)
    _unbounded: bool = attrs.field(default=False, init=False)

    def _cut(self, item: T, matches: bool) -> bool:
        """Add *item* (whose predicate answered *matches*); return True if a list was emitted."""
        raise NotImplementedError

    def on_next(self, item: T) -> None:
        if self._done:
            return
        try:
            matches = bool(self._predicate(item))
        except Exception as exc:
            self._fail(exc)
            return
        if not self._cut(item, matches) and not self._unbounded:
            upstream = self._upstream
            if upstream is not None:
                upstream.request(1)

    def _emit(self) -> bool:
        """Emit the open list, if any."""
        items = self._items
        if not items:
            return False
        self._items = []
        self._requested = produced(self._requested, 1)
        self._next(items)
        return True

    def on_complete(self) -> None:
        items, self._items = self._items, []
        self._complete_with([items] if items else [])

    def _drop_held(self) -> None:
        self._items = []

    def _ask_upstream(self, n: int) -> None:
        if n >= MAX_DEMAND:
            self._unbounded = True
        upstream = self._upstream
        if upstream is not None:
            upstream.request(n)


@final
@attrs.define(eq=False)
class _BufferUntilSubscriber(SplitSubscriber[T]):
    _cut_before: bool = attrs.field(kw_only=True, alias="cut_before")

    def _cut(self, item: T, matches: bool) -> bool:
        if not matches:
            self._items.append(item)
            return False
        if self._cut_before:
            emitted = self._emit()
            self._items.append(item)
            return emitted
        self._items.append(item)
        return self._emit()
