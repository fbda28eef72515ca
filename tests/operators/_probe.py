"""`Probe`: a publisher wrapper that records subscriptions, requests and cancels."""

from __future__ import annotations

from typing import Generic, TypeVar

import attrs

from reactive_aio import Publisher, Subscriber, Subscription

T = TypeVar("T")


@attrs.define(eq=False)
class Probe(Publisher[T], Generic[T]):
    """Wraps *source*; counts what its subscribers ask of it."""

    source: Publisher[T]
    subscribed: int = 0
    requests: list[int] = attrs.field(factory=list)
    cancels: int = 0

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        self.subscribed += 1
        self.source.subscribe(_ProbeLink(subscriber, self))

    @property
    def requested(self) -> int:
        return sum(self.requests)


@attrs.define(eq=False)
class _ProbeLink(Subscriber[T], Subscription, Generic[T]):
    downstream: Subscriber[T]
    probe: Probe[T]
    upstream: Subscription | None = None

    def on_subscribe(self, subscription: Subscription) -> None:
        self.upstream = subscription
        self.downstream.on_subscribe(self)

    def on_next(self, item: T) -> None:
        self.downstream.on_next(item)

    def on_error(self, error: BaseException) -> None:
        self.downstream.on_error(error)

    def on_complete(self) -> None:
        self.downstream.on_complete()

    def request(self, n: int) -> None:
        self.probe.requests.append(n)
        assert self.upstream is not None
        self.upstream.request(n)

    def cancel(self) -> None:
        self.probe.cancels += 1
        assert self.upstream is not None
        self.upstream.cancel()
