"""``ignore_elements``: only the terminal signal of the source; its items are dropped.

Backpressure: upstream is asked for everything at once (no item ever reaches downstream, so
downstream demand has nothing to bound); downstream requests are only checked (rule 3.9).
Errors: upstream errors pass through.
"""

from __future__ import annotations

from typing import Never, final

import attrs

from .._core import (
    MAX_DEMAND,
    OperatorSubscriber,
    Publisher,
    Subscriber,
    Subscription,
    require_not_none,
)

__all__ = ("IgnoreElementsPublisher",)


@final
@attrs.frozen
class IgnoreElementsPublisher(Publisher[Never]):
    """What `Flux.ignore_elements` returns (and the first part of `Flux.then`)."""

    source: Publisher[object]

    def subscribe(self, subscriber: Subscriber[Never]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(_IgnoreElementsSubscriber(subscriber))


@final
@attrs.define(eq=False)
class _IgnoreElementsSubscriber(OperatorSubscriber[object, Never]):
    def on_subscribe(self, subscription: Subscription) -> None:
        super().on_subscribe(subscription)
        if self._upstream is subscription:
            subscription.request(MAX_DEMAND)

    def on_next(self, item: object) -> None:
        pass

    def _request(self, n: int) -> None:
        if type(n) is not int or n <= 0:
            super()._request(n)  # upstream signals the rule 3.9 error
