"""UnicastProcessor: one subscriber, a bounded buffer, items kept until it arrives."""

from __future__ import annotations

import threading

from reactive_aio import MissingBackpressureError, ProtocolViolationError, UnicastProcessor
from reactive_aio.testing import TestSubscriber

from ._support import Upstream


def test_buffers_until_the_subscriber_arrives_and_demands() -> None:
    processor = UnicastProcessor[int](8)
    upstream = Upstream().attach(processor)
    assert upstream.requests == [8]
    for i in range(6):
        processor.on_next(i)
    processor.on_complete()
    assert processor.buffered == 6
    ts = TestSubscriber[int]()
    processor.subscribe(ts)
    ts.assert_no_values()
    ts.request(1)
    ts.assert_values(0)
    ts.request(10)
    ts.assert_values(*range(6)).assert_complete().assert_max_depth()


def test_replenishes_three_quarters() -> None:
    processor = UnicastProcessor[int](4)
    upstream = Upstream().attach(processor)
    ts = TestSubscriber[int](initial_request=100)
    processor.subscribe(ts)
    for i in range(3):
        processor.on_next(i)
    assert upstream.requests == [4, 3]


def test_second_subscriber_is_rejected() -> None:
    processor = UnicastProcessor[int]()
    processor.subscribe(TestSubscriber[int]())
    second = TestSubscriber[int]()
    processor.subscribe(second)
    second.assert_error(ProtocolViolationError, match="only one subscriber")


def test_cancel_cancels_upstream_and_errors_pass() -> None:
    processor = UnicastProcessor[int]()
    upstream = Upstream().attach(processor)
    ts = TestSubscriber[int](initial_request=1)
    processor.subscribe(ts)
    ts.cancel()
    assert upstream.cancelled
    failed = UnicastProcessor[int]()
    failed.on_error(OSError("down"))
    late = TestSubscriber[int]()
    failed.subscribe(late)
    late.assert_error(OSError)


def test_overflow_and_raising_subscriber() -> None:
    processor = UnicastProcessor[int](2)
    ts = TestSubscriber[int]()
    processor.subscribe(ts)
    for i in range(3):
        processor.on_next(i)
    ts.request(5)
    ts.assert_values(0, 1).assert_error(MissingBackpressureError)

    def boom(item: int) -> None:
        raise ValueError("no")

    raising = UnicastProcessor[int]()
    upstream = Upstream().attach(raising)
    bad = TestSubscriber[int](initial_request=5, on_next_callback=boom)
    raising.subscribe(bad)
    raising.on_next(1)
    assert upstream.cancelled


async def test_on_next_from_another_thread() -> None:
    processor = UnicastProcessor[int](256)
    ts = TestSubscriber[int](initial_request=1000)
    processor.subscribe(ts)

    def produce() -> None:
        for i in range(100):
            processor.on_next(i)
        processor.on_complete()

    thread = threading.Thread(target=produce)
    thread.start()
    await ts.wait_terminated()
    thread.join()
    ts.assert_values(*range(100)).assert_complete()
