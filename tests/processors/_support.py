"""A controllable upstream for processor tests."""

from __future__ import annotations

from reactive_aio import Subscriber


class Upstream:
    """A subscription that records requests and cancellation; the test emits by hand."""

    def __init__(self) -> None:
        self.requests: list[int] = []
        self.cancelled = False

    def request(self, n: int) -> None:
        self.requests.append(n)

    def cancel(self) -> None:
        self.cancelled = True

    def attach(self, subscriber: Subscriber[int]) -> Upstream:
        subscriber.on_subscribe(self)
        return self
