"""Async fusion: an `AsyncBoundarySubscriber` takes an async boundary's place
(`fuse_boundary`) and sends its requests through a `DeferredSubscription`."""

from __future__ import annotations

import asyncio

import attrs
import pytest

from reactive_aio import Flux, Subscriber, Subscription
from reactive_aio.lowlevel import AsyncBoundarySubscriber, DeferredSubscription, fuse_boundary
from reactive_aio.testing import TestSubscriber


@attrs.define(eq=False)
class _Recording(Subscription):
    requests: list[int] = attrs.field(factory=list)
    cancels: int = 0
    fail_with: Exception | None = None

    def request(self, n: int) -> None:
        self.requests.append(n)
        if self.fail_with is not None:
            raise self.fail_with

    def cancel(self) -> None:
        self.cancels += 1


@attrs.define(eq=False)
class _Source:
    """Subscribes whoever comes with a `_Recording` subscription."""

    subscription: _Recording = attrs.field(factory=_Recording)
    subscribers: list[Subscriber[int]] = attrs.field(factory=list)

    def subscribe(self, subscriber: Subscriber[int]) -> None:
        self.subscribers.append(subscriber)
        subscriber.on_subscribe(self.subscription)


@attrs.define(eq=False)
class _Boundary(AsyncBoundarySubscriber[int]):
    """An async boundary subscriber that accepts or refuses, and records what it took."""

    accept: bool
    taken: tuple[int, int] | None = None
    errors: list[BaseException] = attrs.field(factory=list)

    def take_boundary(self, prefetch: int, replenish: int) -> bool:
        if self.accept:
            self.taken = (prefetch, replenish)
        return self.accept

    def on_subscribe(self, subscription: Subscription) -> None:
        pass

    def on_next(self, item: int) -> None:
        pass

    def on_error(self, error: BaseException) -> None:
        self.errors.append(error)

    def on_complete(self) -> None:
        pass


def test_a_boundary_subscriber_that_accepts_is_subscribed_to_the_source() -> None:
    source = _Source()
    subscriber = _Boundary(accept=True)
    assert fuse_boundary(subscriber, source, 16, 12)
    assert subscriber.taken == (16, 12)
    assert source.subscribers == [subscriber]


def test_the_boundary_stays_for_a_subscriber_that_refuses_or_is_no_boundary() -> None:
    source = _Source()
    assert not fuse_boundary(_Boundary(accept=False), source, 16, 12)
    assert not fuse_boundary(TestSubscriber[int](), source, 16, 12)
    assert source.subscribers == []


async def test_deferred_requests_go_out_from_a_loop_callback_in_order() -> None:
    upstream = _Recording()
    deferred = DeferredSubscription(upstream, asyncio.get_running_loop(), _Boundary(accept=True))
    deferred.request(3)
    deferred.request(5)
    assert upstream.requests == []
    await asyncio.sleep(0)
    assert upstream.requests == [3, 5]


async def test_a_cancel_acts_at_once_and_drops_the_requests_still_waiting() -> None:
    upstream = _Recording()
    deferred = DeferredSubscription(upstream, asyncio.get_running_loop(), _Boundary(accept=True))
    deferred.request(3)
    deferred.cancel()
    deferred.cancel()
    assert upstream.cancels == 1
    await asyncio.sleep(0)
    assert upstream.requests == []


async def test_a_raising_request_cancels_upstream_and_fails_the_subscriber() -> None:
    upstream = _Recording(fail_with=OSError("request broke rule 3.15"))
    subscriber = _Boundary(accept=True)
    deferred = DeferredSubscription(upstream, asyncio.get_running_loop(), subscriber)
    deferred.request(1)
    await asyncio.sleep(0)
    assert upstream.cancels == 1
    assert [str(e) for e in subscriber.errors] == ["request broke rule 3.15"]


async def test_async_for_over_a_publisher_whose_request_raises_gets_the_error() -> None:
    class Broken:
        def subscribe(self, subscriber: Subscriber[int]) -> None:
            subscriber.on_subscribe(_Recording(fail_with=OSError("request failed")))

    with pytest.raises(OSError, match="request failed"):
        async for _ in Flux.from_publisher(Broken()).publish_on(buffer_size=4):
            pass
