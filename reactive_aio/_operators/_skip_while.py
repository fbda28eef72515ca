"""``skip_while``: drop items while a predicate holds, then pass everything.

Backpressure: pass-through; each dropped item is replaced by a ``request(1)`` upstream.
Errors: if the predicate raises, upstream is cancelled first, then ``on_error``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar, final

import attrs

from .._core import DroppingSubscriber, Publisher, Subscriber, require_not_none

__all__ = ("SkipWhilePublisher",)

T = TypeVar("T")


@final
@attrs.frozen
class SkipWhilePublisher(Publisher[T], Generic[T]):
    """What `Flux.skip_while` returns."""

    source: Publisher[T]
    predicate: Callable[[T], object]

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(_SkipWhileSubscriber(subscriber, predicate=self.predicate))


@final
@attrs.define(eq=False)
class _SkipWhileSubscriber(DroppingSubscriber[T, T]):
    _predicate: Callable[[T], object] | None = attrs.field(kw_only=True, alias="predicate")
    """Dropped (set to None) once it failed: from then on items pass untested."""

    def on_next(self, item: T) -> None:
        predicate = self._predicate
        if predicate is not None:
            try:
                skip = predicate(item)
            except Exception as exc:
                self._fail(exc)
                return
            if skip:
                self._drop()
                return
            self._predicate = None
        self._next(item)
