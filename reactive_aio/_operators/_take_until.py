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

from .._core import (
    FirstSignalSubscriber,
    OperatorSubscriber,
    Publisher,
    Subscriber,
    Subscription,
    attach,
    require_not_none,
    stop_watching,
)

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
class _TakeUntilSubscriber(OperatorSubscriber[T, T]):
    _other: Publisher[object] | None = attrs.field(kw_only=True, alias="other")
    watched: Subscription | None = attrs.field(default=None, init=False)
    _early_error: BaseException | None = attrs.field(default=None, init=False)
    _triggered_early: bool = attrs.field(default=False, init=False)
    """The other publisher failed before downstream got ``on_subscribe``."""

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
        if self._triggered_early:
            subscription.cancel()
            downstream = self._finish()
            if attach(downstream, self):  # else refused: subscribed twice (rules 1.10, 2.12)
                downstream.on_subscribe(self)  # what it requests goes nowhere: no upstream
                downstream.on_complete()
            return
        super().on_subscribe(subscription)
        error, self._early_error = self._early_error, None
        if error is not None:
            self._fail(error)

    def on_next(self, item: T) -> None:
        self._next(item)

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
        stop_watching(self)
        if self._upstream is None:
            self._triggered_early = True
        else:
            self._complete_early()

    def other_failed(self, error: BaseException) -> None:
        if self._upstream is None:
            self._early_error = error
            return
        self.watched = None
        self._fail(error)
