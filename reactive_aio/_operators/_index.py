"""``index``: pair every item with its position, ``(0, a), (1, b), …``.

Backpressure: pass-through.
Errors: upstream errors pass through.
"""

from __future__ import annotations

from typing import Generic, TypeVar, final

import attrs

from .._core import OperatorSubscriber, Publisher, Subscriber, require_not_none

__all__ = ("IndexPublisher",)

T = TypeVar("T")


@final
@attrs.frozen
class IndexPublisher(Publisher[tuple[int, T]], Generic[T]):
    """What `Flux.index` returns."""

    source: Publisher[T]

    def subscribe(self, subscriber: Subscriber[tuple[int, T]]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(_IndexSubscriber(subscriber))


@final
@attrs.define(eq=False)
class _IndexSubscriber(OperatorSubscriber[T, tuple[int, T]]):
    _position: int = attrs.field(default=0, init=False)

    def on_next(self, item: T) -> None:
        position = self._position
        self._position = position + 1
        self._next((position, item))
