"""``take_until``: items until another publisher emits its first item.

The other publisher is subscribed (and asked for one item) when the source's subscription
arrives, before downstream gets ``on_subscribe``, so no item can pass before it had its
chance; its completion without an item changes nothing.

Backpressure: pass-through for the source.
Errors: an error of either publisher ends the stream; the other one is cancelled.
"""

from __future__ import annotations

from typing import Generic, TypeVar, final

import attrs

from .._core import GatedSubscriber, Publisher, Subscriber, require_not_none

__all__ = ("TakeUntilPublisher",)

T = TypeVar("T")


@final
@attrs.frozen
class TakeUntilPublisher(Publisher[T], Generic[T]):
    """What `Flux.take_until` returns."""

    source: Publisher[T]
    other: Publisher[object]

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(_TakeUntilSubscriber(subscriber, other=self.other))


@final
@attrs.define(eq=False)
class _TakeUntilSubscriber(GatedSubscriber[T]):
    def on_next(self, item: T) -> None:
        self._next(item)

    def other_emitted(self) -> None:
        self._complete_early()
