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
    BufferDrain,
    OperatorSubscriber,
    Publisher,
    Subscriber,
    Subscription,
    add_demand,
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
class _TakeLastSubscriber(OperatorSubscriber[T, T]):
    _count: int = attrs.field(kw_only=True, alias="count")
    _held: deque[T] = attrs.field(init=False)
    _requested: int = attrs.field(default=0, init=False)
    """Downstream demand recorded before completion, handed to the tail."""
    _tail: BufferDrain[T] | None = attrs.field(default=None, init=False)

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
        if self._done:
            return
        downstream = self._finish()
        self._upstream = None
        tail = BufferDrain[T](downstream)
        self._tail = tail
        held, self._held = self._held, deque(maxlen=0)
        for item in held:
            tail.push(item)
        tail.finish()
        if self._requested:
            tail.request(self._requested)

    def on_error(self, error: BaseException) -> None:
        self._held.clear()
        super().on_error(error)

    def _request(self, n: int) -> None:
        tail = self._tail
        if tail is not None:
            tail.request(n)
        elif type(n) is not int or n <= 0:
            super()._request(n)  # upstream signals the rule 3.9 error
        elif not self._done:
            self._requested = add_demand(self._requested, n)

    def cancel(self) -> None:
        tail = self._tail
        if tail is not None:
            tail.cancel()
        else:
            super().cancel()
            self._held.clear()
