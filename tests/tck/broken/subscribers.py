"""Subscribers with one flaw each, for the subscriber verifications."""

from __future__ import annotations

from reactive_aio import Subscriber, Subscription
from reactive_aio.tck import SubscriptionPuppet, WhiteboxSubscriberProbe

from ..reference import RequestingSubscriber


class KeepsSecondSubscription(RequestingSubscriber[int]):
    """Flaw: a second ``on_subscribe`` replaces the first instead of being cancelled (2.5)."""

    def on_subscribe(self, subscription: Subscription) -> None:
        if subscription is None:
            raise TypeError("rule 2.13: on_subscribe(None)")
        first = self.subscription is None
        self.subscription = subscription
        if self.probe is not None:
            if first:
                self.probe.register_on_subscribe(SubscriptionPuppet(subscription))
        else:
            subscription.request(1)


class AcceptsNone(Subscriber[int]):
    """Flaw: ``None`` is accepted in every signal (2.13)."""

    def __init__(self, probe: WhiteboxSubscriberProbe[int] | None = None) -> None:
        self.inner = RequestingSubscriber(probe)

    def on_subscribe(self, subscription: Subscription) -> None:
        if subscription is not None:
            self.inner.on_subscribe(subscription)

    def on_next(self, item: int) -> None:
        if item is not None:
            self.inner.on_next(item)

    def on_error(self, error: BaseException) -> None:
        if error is not None:
            self.inner.on_error(error)

    def on_complete(self) -> None:
        self.inner.on_complete()
