"""publish_on: an async boundary with a bounded prefetch buffer."""

from __future__ import annotations

import asyncio
import threading

import pytest

from reactive_aio import Flux, MissingBackpressureError, Subscriber
from reactive_aio.testing import TestSubscriber


class _Recorder:
    """A source that records the requests it receives and lets the test push items."""

    def __init__(self) -> None:
        self.requests: list[int] = []
        self.cancelled = False
        self.subscriber: Subscriber[int] | None = None

    def subscribe(self, subscriber: Subscriber[int]) -> None:
        self.subscriber = subscriber
        subscriber.on_subscribe(self)

    def request(self, n: int) -> None:
        self.requests.append(n)

    def cancel(self) -> None:
        self.cancelled = True


async def test_publish_on_delivers_everything_in_order() -> None:
    assert await Flux.range(0, 10_000).publish_on(buffer_size=16).to_list() == list(range(10_000))


async def test_publish_on_waits_for_demand() -> None:
    ts = TestSubscriber[int]()
    Flux.range(0, 5).publish_on(buffer_size=4).subscribe(ts)
    await asyncio.sleep(0)
    ts.assert_no_values()
    ts.request(1)
    await ts.wait_for_values(1)
    ts.assert_values(0).assert_not_terminated()
    ts.request(10)
    await ts.wait_terminated()
    ts.assert_values(0, 1, 2, 3, 4).assert_complete().assert_max_depth()


async def test_publish_on_does_not_emit_on_the_producer_stack() -> None:
    source = _Recorder()
    ts = TestSubscriber[int](initial_request=10)
    Flux.from_publisher(source).publish_on(buffer_size=8).subscribe(ts)
    assert source.subscriber is not None
    source.subscriber.on_next(1)
    ts.assert_no_values()  # only scheduled
    await ts.wait_for_values(1)
    ts.assert_values(1)


async def test_publish_on_prefetches_then_replenishes_three_quarters() -> None:
    source = _Recorder()
    ts = TestSubscriber[int]()
    Flux.from_publisher(source).publish_on(buffer_size=8).subscribe(ts)
    assert source.requests == [8]
    assert source.subscriber is not None
    for i in range(8):
        source.subscriber.on_next(i)
    ts.request(5)
    await ts.wait_for_values(5)
    assert source.requests == [8]
    ts.request(1)
    await ts.wait_for_values(6)
    assert source.requests == [8, 6]


async def test_publish_on_overflowing_upstream_is_an_error() -> None:
    source = _Recorder()
    ts = TestSubscriber[int]()
    Flux.from_publisher(source).publish_on(buffer_size=2).subscribe(ts)
    assert source.subscriber is not None
    for i in range(3):
        source.subscriber.on_next(i)
    assert source.cancelled
    ts.request(5)
    await ts.wait_terminated()
    ts.assert_values(0, 1).assert_error(MissingBackpressureError, match="rule 1.1")


async def test_publish_on_cancel_cancels_upstream() -> None:
    source = _Recorder()
    ts = TestSubscriber[int](initial_request=1)
    Flux.from_publisher(source).publish_on().subscribe(ts)
    ts.cancel()
    assert source.cancelled


async def test_publish_on_error_arrives_after_buffered_items() -> None:
    ts = TestSubscriber[int](initial_request=10)
    Flux.error(OSError("down")).publish_on().subscribe(ts)
    await ts.wait_terminated()
    ts.assert_error(OSError)
    source = _Recorder()
    ts2 = TestSubscriber[int]()
    Flux.from_publisher(source).publish_on().subscribe(ts2)
    assert source.subscriber is not None
    source.subscriber.on_next(1)
    source.subscriber.on_error(OSError("late"))
    ts2.request(1)
    await ts2.wait_terminated()
    ts2.assert_values(1).assert_error(OSError, match="late")


async def test_publish_on_raising_subscriber_cancels_upstream() -> None:
    source = _Recorder()

    def boom(item: int) -> None:
        raise ValueError("subscriber failed")

    ts = TestSubscriber[int](initial_request=5, on_next_callback=boom)
    Flux.from_publisher(source).publish_on().subscribe(ts)
    assert source.subscriber is not None
    source.subscriber.on_next(1)
    await ts.wait_for_values(1)
    assert source.cancelled  # rule 2.13: the subscription is treated as cancelled


async def test_publish_on_takes_items_from_another_thread() -> None:
    source = _Recorder()
    ts = TestSubscriber[int](initial_request=100)
    Flux.from_publisher(source).publish_on(buffer_size=128).subscribe(ts)
    subscriber = source.subscriber
    assert subscriber is not None

    def produce() -> None:
        for i in range(100):
            subscriber.on_next(i)
        subscriber.on_complete()

    thread = threading.Thread(target=produce)
    thread.start()
    await ts.wait_terminated()
    thread.join()
    ts.assert_values(*range(100)).assert_complete()
    assert ts.threads == {threading.get_ident()}


def test_publish_on_needs_a_loop() -> None:
    ts = TestSubscriber[int](initial_request=1)
    Flux.range(0, 1).publish_on().subscribe(ts)
    ts.assert_error(RuntimeError, match="running event loop")


def test_publish_on_rejects_bad_buffer_size() -> None:
    with pytest.raises(ValueError, match="buffer_size"):
        Flux.range(0, 1).publish_on(buffer_size=0)
