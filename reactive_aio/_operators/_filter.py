"""``filter``: keep the items for which a predicate is true.

Backpressure: pass-through; each dropped item is replaced by a ``request(1)`` upstream, so
downstream still gets what it asked for (unless demand is already unbounded).
Errors: if the predicate raises, upstream is cancelled first, then ``on_error``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar, final

import attrs

from .._core import MAX_DEMAND, OperatorSubscriber, Publisher, Subscriber, require_not_none

__all__ = ("FilterPublisher",)

T = TypeVar("T")


@final
@attrs.frozen
class FilterPublisher(Publisher[T], Generic[T]):
    """What `Flux.filter` returns."""

    source: Publisher[T]
    predicate: Callable[[T], object]

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(_FilterSubscriber(subscriber, predicate=self.predicate))


@final
@attrs.define(eq=False)
class _FilterSubscriber(OperatorSubscriber[T, T]):
    _predicate: Callable[[T], object] = attrs.field(kw_only=True, alias="predicate")
    _unbounded: bool = attrs.field(default=False, init=False)
    """Downstream asked for everything: a dropped item needs no replacement request."""

    def on_next(self, item: T) -> None:
        try:
            keep = self._predicate(item)
        except Exception as exc:
            self._fail(exc)
            return
        if keep:
            self._next(item)
        elif not self._unbounded and not self._done:
            upstream = self._upstream
            assert upstream is not None
            upstream.request(1)

    def request(self, n: int) -> None:
        if type(n) is int and n >= MAX_DEMAND:
            self._unbounded = True
        super().request(n)
