"""MulticastProcessor: prefetch by three quarters, lockstep, late subscribers, ref-counted cancel."""

from __future__ import annotations

import threading

import pytest

from reactive_aio import Flux, MissingBackpressureError, MulticastProcessor
from reactive_aio.testing import TestSubscriber

from ._support import Upstream


def test_prefetches_window_and_rerequests_by_three_quarters() -> None:
    processor = MulticastProcessor[int](8)
    upstream = Upstream().attach(processor)
    assert upstream.requests == [8]
    ts = TestSubscriber[int](initial_request=100)
    processor.subscribe(ts)
    for i in range(5):
        processor.on_next(i)
    ts.assert_values(0, 1, 2, 3, 4)
    assert upstream.requests == [8]  # 5 of 8 delivered: not yet three quarters
    processor.on_next(5)
    assert upstream.requests == [8, 6]


def test_lockstep_slowest_sets_the_pace() -> None:
    processor = MulticastProcessor[int](16)
    upstream = Upstream().attach(processor)
    fast = TestSubscriber[int](initial_request=100)
    slow = TestSubscriber[int]()
    processor.subscribe(fast)
    processor.subscribe(slow)
    for i in range(5):
        processor.on_next(i)
    fast.assert_no_values()  # waits for the slow one
    slow.request(2)
    fast.assert_values(0, 1)
    slow.assert_values(0, 1)
    assert processor.buffered == 3
    slow.request(10)
    fast.assert_values(0, 1, 2, 3, 4)
    slow.assert_values(0, 1, 2, 3, 4)
    processor.on_complete()
    fast.assert_complete().assert_max_depth()
    slow.assert_complete()
    assert not upstream.cancelled


def test_request_zero_then_one() -> None:
    processor = MulticastProcessor[int](4)
    Upstream().attach(processor)
    ts = TestSubscriber[int]()
    processor.subscribe(ts)
    processor.on_next(1)
    ts.assert_no_values()
    ts.request(1)
    ts.assert_values(1)
    bad = TestSubscriber[int]()
    processor.subscribe(bad)
    bad.request(0)
    bad.assert_error(ValueError, match="rule 3.9")
    processor.on_next(2)
    ts.request(1)
    ts.assert_values(1, 2)  # the failed subscriber no longer holds the others back


def test_late_subscriber_after_termination() -> None:
    processor = MulticastProcessor[int](4)
    Upstream().attach(processor)
    processor.on_error(OSError("down"))
    late = TestSubscriber[int]()
    processor.subscribe(late)
    assert late.subscriptions == 1
    late.assert_error(OSError)
    done = MulticastProcessor[int](4)
    done.on_complete()
    late2 = TestSubscriber[int]()
    done.subscribe(late2)
    late2.assert_complete()


def test_error_arrives_after_queued_items() -> None:
    processor = MulticastProcessor[int](4)
    Upstream().attach(processor)
    ts = TestSubscriber[int]()
    processor.subscribe(ts)
    processor.on_next(1)
    processor.on_error(OSError("down"))
    ts.assert_no_values().assert_not_terminated()
    ts.request(1)
    ts.assert_values(1).assert_error(OSError)


def test_last_cancel_cancels_upstream() -> None:
    processor = MulticastProcessor[int](4)
    upstream = Upstream().attach(processor)
    a = TestSubscriber[int](initial_request=1)
    b = TestSubscriber[int](initial_request=1)
    processor.subscribe(a)
    processor.subscribe(b)
    a.cancel()
    assert upstream.requests == [4]
    assert not upstream.cancelled
    b.cancel()
    assert _cancelled(upstream)
    assert processor.subscriber_count == 0


def test_raising_subscriber_is_dropped_others_continue() -> None:
    processor = MulticastProcessor[int](4)
    upstream = Upstream().attach(processor)

    def boom(item: int) -> None:
        raise ValueError("subscriber failed")

    bad = TestSubscriber[int](initial_request=10, on_next_callback=boom)
    good = TestSubscriber[int](initial_request=10)
    processor.subscribe(bad)
    processor.subscribe(good)
    processor.on_next(1)
    processor.on_next(2)
    bad.assert_values(1)
    good.assert_values(1, 2)
    assert processor.subscriber_count == 1
    assert not upstream.cancelled


def test_overflowing_upstream_fails() -> None:
    processor = MulticastProcessor[int](2)
    upstream = Upstream().attach(processor)
    ts = TestSubscriber[int]()
    processor.subscribe(ts)
    for i in range(3):
        processor.on_next(i)
    assert upstream.cancelled
    ts.request(5)
    ts.assert_values(0, 1).assert_error(MissingBackpressureError)


def test_second_upstream_is_cancelled_and_bad_size_rejected() -> None:
    processor = MulticastProcessor[int](2)
    Upstream().attach(processor)
    second = Upstream().attach(processor)
    assert second.cancelled
    with pytest.raises(ValueError, match="buffer_size"):
        MulticastProcessor[int](0)


async def test_on_next_from_another_thread_is_handed_over() -> None:
    processor = MulticastProcessor[int](256)
    ts = TestSubscriber[int](initial_request=1000)
    processor.subscribe(ts)
    upstream = Upstream().attach(processor)

    def produce() -> None:
        for i in range(200):
            processor.on_next(i)
        processor.on_complete()

    thread = threading.Thread(target=produce)
    thread.start()
    await ts.wait_terminated()
    thread.join()
    ts.assert_values(*range(200)).assert_complete()
    assert ts.threads == {threading.get_ident()}
    assert not upstream.cancelled


async def test_many_items_through_a_real_source() -> None:
    processor = MulticastProcessor[int](32)
    a = TestSubscriber[int](initial_request=10_000)
    b = TestSubscriber[int](initial_request=10_000)
    processor.subscribe(a)
    processor.subscribe(b)
    Flux.range(0, 5_000).subscribe(processor)
    await a.wait_terminated()
    await b.wait_terminated()
    a.assert_value_count(5_000).assert_complete()
    assert a.values == b.values


def _cancelled(upstream: Upstream) -> bool:
    return upstream.cancelled


def test_a_subscriber_that_joins_late_is_owed_only_its_own_demand() -> None:
    # Demand is each subscription's own: what went out before a subscriber joined is not
    # charged to it, and what it asked for is not lost to items it never saw.
    processor = MulticastProcessor[int](16)
    Upstream().attach(processor)
    first = TestSubscriber[int](initial_request=3)
    processor.subscribe(first)
    for i in range(2):
        processor.on_next(i)
    late = TestSubscriber[int](initial_request=2)
    processor.subscribe(late)
    for i in range(2, 6):
        processor.on_next(i)
    first.assert_values(0, 1, 2)  # its third item; then it has no demand left
    late.assert_values(2)  # lockstep: the slowest sets the pace
    first.request(10)
    first.assert_values(0, 1, 2, 3)
    late.assert_values(2, 3)  # its two items
    late.request(1)
    first.assert_values(0, 1, 2, 3, 4)
    late.assert_values(2, 3, 4)
    assert processor.buffered == 1


def test_a_request_from_inside_on_next_is_counted_once() -> None:
    processor = MulticastProcessor[int](16)
    Upstream().attach(processor)
    one_by_one = TestSubscriber[int](initial_request=1)
    one_by_one.on_next_callback = lambda _: one_by_one.request(1)
    unbounded = TestSubscriber[int](initial_request=2**63 - 1)
    processor.subscribe(one_by_one)
    processor.subscribe(unbounded)
    for i in range(10):
        processor.on_next(i)
    one_by_one.assert_values(*range(10)).assert_max_depth(1)
    unbounded.assert_values(*range(10))
    assert processor.buffered == 0
