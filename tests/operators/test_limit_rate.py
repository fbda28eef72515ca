"""limit_rate: upstream sees request(high), then request(low) at a time."""

from __future__ import annotations

import pytest

from reactive_aio import MAX_DEMAND, Flux, Subscriber
from reactive_aio.testing import TestSubscriber


def test_limit_rate_shapes_upstream_requests() -> None:
    requests: list[int] = []

    class Spy:
        def subscribe(self, subscriber: Subscriber[int]) -> None:
            Flux.range(0, 100).subscribe(_SpySubscriber(subscriber, requests))

    ts = TestSubscriber[int](initial_request=MAX_DEMAND)
    Flux.from_publisher(Spy()).limit_rate(10).subscribe(ts)
    ts.assert_values(*range(100)).assert_complete()
    assert requests[0] == 10
    assert set(requests[1:]) <= {8}


def test_limit_rate_custom_low_and_demand() -> None:
    requests: list[int] = []

    class Spy:
        def subscribe(self, subscriber: Subscriber[int]) -> None:
            Flux.range(0, 20).subscribe(_SpySubscriber(subscriber, requests))

    ts = TestSubscriber[int]()
    Flux.from_publisher(Spy()).limit_rate(6, 2).subscribe(ts)
    assert requests == [6]
    ts.assert_no_values()
    ts.request(1)
    ts.assert_values(0)
    ts.request(1)
    assert requests == [6, 2]
    ts.request(100)
    ts.assert_values(*range(20)).assert_complete().assert_max_depth()


def test_limit_rate_cancel_and_errors() -> None:
    ts = TestSubscriber[int](initial_request=3)
    Flux.range(0, 100).limit_rate(4).subscribe(ts)
    ts.assert_values(0, 1, 2)
    ts.cancel()
    ts.request(10)
    ts.assert_values(0, 1, 2).assert_not_terminated()
    failed = TestSubscriber[int](initial_request=3)
    Flux.error(OSError("down")).limit_rate(4).subscribe(failed)
    failed.assert_error(OSError)


def test_limit_rate_raising_subscriber_cancels_upstream() -> None:
    def boom(item: int) -> None:
        raise ValueError("nope")

    ts = TestSubscriber[int](initial_request=10, on_next_callback=boom)
    Flux.range(0, 100).limit_rate(4).subscribe(ts)
    ts.assert_values(0).assert_not_terminated()


def test_limit_rate_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="high"):
        Flux.range(0, 1).limit_rate(0)
    with pytest.raises(ValueError, match="low"):
        Flux.range(0, 1).limit_rate(4, 5)


class _SpySubscriber:
    """Passes everything on and records the requests made upstream."""

    def __init__(self, downstream: Subscriber[int], requests: list[int]) -> None:
        self.downstream = downstream
        self.requests = requests
        self.upstream: object = None

    def on_subscribe(self, subscription: object) -> None:
        self.upstream = subscription
        self.downstream.on_subscribe(self)

    def on_next(self, item: int) -> None:
        self.downstream.on_next(item)

    def on_error(self, error: BaseException) -> None:
        self.downstream.on_error(error)

    def on_complete(self) -> None:
        self.downstream.on_complete()

    def request(self, n: int) -> None:
        self.requests.append(n)
        self.upstream.request(n)  # type: ignore[attr-defined]

    def cancel(self) -> None:
        self.upstream.cancel()  # type: ignore[attr-defined]
