"""What the kit's tests share."""

from __future__ import annotations

import attrs

from reactive_aio import Subscriber, Subscription
from reactive_aio.testing import TestPublisher


@attrs.define(eq=False)
class Recording(Subscription):
    """An upstream subscription that records requests and counts cancels."""

    requests: list[int] = attrs.field(factory=list)
    cancels: int = 0

    def request(self, n: int) -> None:
        self.requests.append(n)

    def cancel(self) -> None:
        self.cancels += 1


def through(operator: Subscriber[int]) -> TestPublisher[int]:
    """A source that a test drives by hand, subscribed by *operator*."""
    source = TestPublisher[int].create()
    source.subscribe(operator)
    return source
