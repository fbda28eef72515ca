"""``take_while``: items while a predicate holds; the first item failing it ends the stream.

With ``inclusive=True`` that first failing item is emitted before completion (RxPY's
``take_while(..., inclusive=True)``; Reactor's ``takeUntil(p)`` is ``take_while(not p,
inclusive=True)``).

Backpressure: pass-through; upstream is cancelled at the first failing item (emitted only
when inclusive).
Errors: if the predicate raises, upstream is cancelled first, then ``on_error``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar, final

import attrs

from .._core import OperatorSubscriber, Publisher, Subscriber, require_not_none

__all__ = ("TakeWhilePublisher",)

T = TypeVar("T")


@final
@attrs.frozen
class TakeWhilePublisher(Publisher[T], Generic[T]):
    """What `Flux.take_while` returns."""

    source: Publisher[T]
    predicate: Callable[[T], object]
    inclusive: bool = False

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(
            _TakeWhileSubscriber(subscriber, predicate=self.predicate, inclusive=self.inclusive)
        )


@final
@attrs.define(eq=False)
class _TakeWhileSubscriber(OperatorSubscriber[T, T]):
    _predicate: Callable[[T], object] = attrs.field(kw_only=True, alias="predicate")
    _inclusive: bool = attrs.field(kw_only=True, alias="inclusive")

    def on_next(self, item: T) -> None:
        if self._done:
            return
        try:
            keep = self._predicate(item)
        except Exception as exc:
            self._fail(exc)
            return
        if keep:
            self._next(item)
        else:
            if self._inclusive:
                self._next(item)
            self._complete_early()
