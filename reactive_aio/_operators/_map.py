"""``map``: apply a synchronous function to every item.

Backpressure: pass-through; ``request(n)`` goes upstream unchanged.
Errors: if *fn* raises or returns ``None``, upstream is cancelled first, then ``on_error``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar, final

import attrs

from .._core import (
    NullSignalError,
    OperatorSubscriber,
    Publisher,
    Subscriber,
    require_not_none,
    short_repr,
)

__all__ = ("MapPublisher",)

T = TypeVar("T")
R = TypeVar("R")


@final
@attrs.frozen
class MapPublisher(Publisher[R], Generic[T, R]):
    """What `Flux.map` returns; cold, so every subscribe starts afresh."""

    source: Publisher[T]
    fn: Callable[[T], R]

    def subscribe(self, subscriber: Subscriber[R]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(_MapSubscriber(subscriber, fn=self.fn))


@final
@attrs.define(eq=False)
class _MapSubscriber(OperatorSubscriber[T, R]):
    _fn: Callable[[T], R] = attrs.field(kw_only=True, alias="fn")

    def on_next(self, item: T) -> None:
        try:
            value = self._fn(item)
        except Exception as exc:  # user code fails the stream, never the caller
            self._fail(exc)
            return
        if value is None:
            self._fail(
                NullSignalError(f"rule 2.13: map's function returned None for {short_repr(item)}")
            )
            return
        self._next(value)
