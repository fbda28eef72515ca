"""``take_last``: only the last *n* items, emitted once upstream completes.

Backpressure: upstream is asked for everything (the last items are only known at the end)
and at most *n* items are held; after completion they are emitted within downstream demand
by a `BufferDrain`, which then completes.
Errors: upstream errors pass through and the held items are dropped.
"""

from __future__ import annotations

from collections import deque
from typing import Generic, TypeVar, final

import attrs

from .._core import (
    MAX_DEMAND,
    Publisher,
    Subscriber,
    Subscription,
    TailSubscriber,
    require_not_none,
)

__all__ = ("TakeLastPublisher",)

T = TypeVar("T")


@final
@attrs.frozen
class TakeLastPublisher(Publisher[T], Generic[T]):
    """What `Flux.take_last` returns."""

    source: Publisher[T]
    count: int

    def __attrs_post_init__(self) -> None:
        if self.count < 0:
            raise ValueError(f"take_last count must be >= 0, got {self.count}")

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(_TakeLastSubscriber(subscriber, count=self.count))


@final
@attrs.define(eq=False)
class _TakeLastSubscriber(TailSubscriber[T, T]):
    _count: int = attrs.field(kw_only=True, alias="count")
    _held: deque[T] = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        self._held = deque(maxlen=self._count)

    def on_subscribe(self, subscription: Subscription) -> None:
        super().on_subscribe(subscription)
        if self._upstream is subscription and not self._done:
            subscription.request(MAX_DEMAND)

    def on_next(self, item: T) -> None:
        if not self._done:
            self._held.append(item)

    def on_complete(self) -> None:
        held, self._held = self._held, deque(maxlen=0)
        self._complete_with(held)

    def _drop_held(self) -> None:
        self._held.clear()
