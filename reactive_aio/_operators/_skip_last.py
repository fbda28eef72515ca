"""``skip_last``: drop the last *n* items (every item is held back until *n* more arrived).

Backpressure: the first downstream request is raised by *n* (saturated) to fill the delay
line; after that each upstream item releases exactly one item downstream.
Errors: upstream errors pass through; the held-back items are dropped.
"""

from __future__ import annotations

from collections import deque
from typing import Generic, TypeVar, final

import attrs

from .._core import AskAheadSubscriber, Publisher, Subscriber, require_not_none

__all__ = ("SkipLastPublisher",)

T = TypeVar("T")


@final
@attrs.frozen
class SkipLastPublisher(Publisher[T], Generic[T]):
    """What `Flux.skip_last` returns."""

    source: Publisher[T]
    count: int

    def __attrs_post_init__(self) -> None:
        if self.count < 0:
            raise ValueError(f"skip_last count must be >= 0, got {self.count}")

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(_SkipLastSubscriber(subscriber, ahead=self.count, count=self.count))


@final
@attrs.define(eq=False)
class _SkipLastSubscriber(AskAheadSubscriber[T]):
    _count: int = attrs.field(kw_only=True, alias="count")
    _held: deque[T] = attrs.field(factory=deque, init=False)

    def on_next(self, item: T) -> None:
        held = self._held
        held.append(item)
        if len(held) > self._count:
            self._next(held.popleft())

    def _finish(self) -> Subscriber[T]:
        downstream = super()._finish()
        self._held.clear()
        return downstream
