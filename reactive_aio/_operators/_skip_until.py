"""``skip_until``: drop items until another publisher emits its first item.

The other publisher is subscribed (and asked for one item) when the source's subscription
arrives, before downstream gets ``on_subscribe``; if it completes without an item, every item
is dropped.

Backpressure: each dropped item is replaced by a ``request(1)`` upstream; after the gate
opens, demand passes through.
Errors: an error of either publisher ends the stream; the other one is cancelled.
"""

from __future__ import annotations

from typing import Generic, TypeVar, final

import attrs

from .._core import GatedSubscriber, Publisher, Subscriber, require_not_none

__all__ = ("SkipUntilPublisher",)

T = TypeVar("T")


@final
@attrs.frozen
class SkipUntilPublisher(Publisher[T], Generic[T]):
    """What `Flux.skip_until` returns."""

    source: Publisher[T]
    other: Publisher[object]

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(_SkipUntilSubscriber(subscriber, other=self.other))


@final
@attrs.define(eq=False)
class _SkipUntilSubscriber(GatedSubscriber[T]):
    is_open: bool = attrs.field(default=False, init=False)

    def on_next(self, item: T) -> None:
        if self.is_open:
            self._next(item)
        else:
            self._drop()

    def other_emitted(self) -> None:
        self.is_open = True
