"""Test doubles shared by the transform/filter/error-handling operator tests."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator

import attrs

from reactive_aio import Flux, Publisher, Subscriber, Subscription
from reactive_aio.testing import TestSubscriber


@attrs.define(eq=False)
class Probe(Publisher[int]):
    """``range(0, count)`` (then *error* if given) that records requests, cancels, subscribes."""

    count: int
    error: BaseException | None = None
    requests: list[int] = attrs.field(factory=list, init=False)
    cancels: int = attrs.field(default=0, init=False)
    subscribes: int = attrs.field(default=0, init=False)

    def subscribe(self, subscriber: Subscriber[int]) -> None:
        self.subscribes += 1
        source = Flux.from_iterable(_items(self.count, self.error))
        source.subscribe(_Spy(subscriber, self))

    @property
    def requested(self) -> int:
        """Total demand asked of this probe, over all subscriptions."""
        return sum(self.requests)


def _items(count: int, error: BaseException | None) -> Iterator[int]:
    yield from range(count)
    if error is not None:
        raise error


@attrs.define(eq=False)
class _Spy(Subscriber[int], Subscription):
    downstream: Subscriber[int]
    probe: Probe
    upstream: Subscription | None = None

    def on_subscribe(self, subscription: Subscription) -> None:
        self.upstream = subscription
        self.downstream.on_subscribe(self)

    def on_next(self, item: int) -> None:
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


async def eventually(condition: Callable[[], bool], rounds: int = 10_000) -> None:
    """Let the loop run until *condition* holds (for state no signal announces)."""
    for _ in range(rounds):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("condition never became true")


def assert_cold_repeater_backpressured(flux: Flux[int]) -> None:
    """*flux* plays ``1, 2`` six times (a first round and five more), one request at a time:
    the resubscribing operators' shared case (Reactor's ``coldRepeaterBackpressured``)."""
    ts = TestSubscriber[int]()
    flux.subscribe(ts)
    ts.assert_no_values()
    ts.request(1)
    ts.assert_values(1)
    ts.request(2)
    ts.assert_values(1, 2, 1)
    ts.request(5)
    ts.assert_values(1, 2, 1, 2, 1, 2, 1, 2).assert_not_terminated()
    ts.request(10)
    ts.assert_values(1, 2, *[1, 2] * 5).assert_complete()
