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

from .._core import (
    DroppingSubscriber,
    FirstSignalSubscriber,
    Publisher,
    Subscriber,
    Subscription,
    require_not_none,
    stop_watching,
)

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
class _SkipUntilSubscriber(DroppingSubscriber[T, T]):
    _other: Publisher[object] | None = attrs.field(kw_only=True, alias="other")
    watched: Subscription | None = attrs.field(default=None, init=False)
    _early_error: BaseException | None = attrs.field(default=None, init=False)
    """The other publisher failed before downstream got ``on_subscribe``."""
    is_open: bool = attrs.field(default=False, init=False)

    @property
    def done(self) -> bool:
        return self._done

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "2.13", "on_subscribe's subscription")
        other, self._other = self._other, None
        if self._upstream is not None or other is None:
            subscription.cancel()  # rule 2.5
            return
        # The other publisher goes first, so it can end the stream before any demand arrives
        # (items requested from inside on_subscribe could otherwise all pass unchecked).
        other.subscribe(FirstSignalSubscriber(self))
        super().on_subscribe(subscription)
        error, self._early_error = self._early_error, None
        if error is not None:
            self._fail(error)

    def on_next(self, item: T) -> None:
        if self.is_open:
            self._next(item)
        else:
            self._drop()

    def on_error(self, error: BaseException) -> None:
        stop_watching(self)
        super().on_error(error)

    def on_complete(self) -> None:
        stop_watching(self)
        super().on_complete()

    def cancel(self) -> None:
        if self._hand_over_cancel():
            return
        stop_watching(self)
        super().cancel()

    def other_emitted(self) -> None:
        self.is_open = True
        stop_watching(self)

    def other_failed(self, error: BaseException) -> None:
        if self._upstream is None:
            self._early_error = error
            return
        self.watched = None
        self._fail(error)
