"""ReplayProcessor and BehaviorProcessor: history for late subscribers, then live."""

from __future__ import annotations

import pytest

from reactive_aio import BehaviorProcessor, NullSignalError, ReplayProcessor
from reactive_aio.testing import TestSubscriber

from ._support import Upstream


def test_replays_last_size_items_then_live() -> None:
    processor = ReplayProcessor[int](size=2)
    upstream = Upstream().attach(processor)
    assert upstream.requests == [2**63 - 1]
    for i in range(5):
        processor.on_next(i)
    late = TestSubscriber[int]()
    processor.subscribe(late)
    late.assert_no_values()
    late.request(1)
    late.assert_values(3)
    late.request(5)
    processor.on_next(5)
    late.assert_values(3, 4, 5)
    processor.on_complete()
    late.assert_complete().assert_max_depth()
    after = TestSubscriber[int](initial_request=10)
    processor.subscribe(after)
    after.assert_values(4, 5).assert_complete()


def test_unbounded_history_and_independent_pace() -> None:
    processor = ReplayProcessor[int]()
    fast = TestSubscriber[int](initial_request=100)
    slow = TestSubscriber[int]()
    processor.subscribe(fast)
    processor.subscribe(slow)
    for i in range(10):
        processor.on_next(i)
    fast.assert_values(*range(10))
    slow.assert_no_values()
    slow.request(3)
    slow.assert_values(0, 1, 2)
    assert processor.retained == 10


def test_ttl_expires_items_on_the_clock() -> None:
    now = [0.0]
    processor = ReplayProcessor[int](ttl=1.0, clock=lambda: now[0])
    processor.on_next(1)
    now[0] = 0.5
    processor.on_next(2)
    now[0] = 1.2
    processor.on_next(3)
    late = TestSubscriber[int](initial_request=10)
    processor.subscribe(late)
    late.assert_values(2, 3)
    assert processor.retained == 2


async def test_ttl_defaults_to_the_loop_clock() -> None:
    processor = ReplayProcessor[int](ttl=60.0)
    processor.on_next(1)
    late = TestSubscriber[int](initial_request=10)
    processor.subscribe(late)
    late.assert_values(1)


def test_cancel_and_request_zero() -> None:
    processor = ReplayProcessor[int](size=4)
    upstream = Upstream().attach(processor)
    ts = TestSubscriber[int](initial_request=1)
    processor.subscribe(ts)
    assert processor.subscriber_count == 1
    ts.cancel()
    assert processor.subscriber_count == 0
    processor.on_next(1)
    ts.assert_no_values()
    assert upstream.cancelled  # reference counting: the last subscriber left
    bad = TestSubscriber[int]()
    processor.subscribe(bad)
    bad.request(0)
    bad.assert_error(ValueError, match="rule 3.9")


def test_upstream_error_after_history() -> None:
    processor = ReplayProcessor[int](size=4)
    processor.on_next(1)
    processor.on_error(OSError("down"))
    ts = TestSubscriber[int]()
    processor.subscribe(ts)
    ts.assert_not_terminated()
    ts.request(1)
    ts.assert_values(1).assert_error(OSError)


def test_raising_subscriber_is_dropped() -> None:
    processor = ReplayProcessor[int]()

    def boom(item: int) -> None:
        raise ValueError("no")

    bad = TestSubscriber[int](initial_request=10, on_next_callback=boom)
    processor.subscribe(bad)
    processor.on_next(1)
    processor.on_next(2)
    bad.assert_values(1)
    assert processor.subscriber_count == 0


def test_behavior_gives_latest_or_initial() -> None:
    processor = BehaviorProcessor[int](initial=0)
    first = TestSubscriber[int](initial_request=10)
    processor.subscribe(first)
    first.assert_values(0)
    processor.on_next(1)
    processor.on_next(2)
    second = TestSubscriber[int](initial_request=10)
    processor.subscribe(second)
    second.assert_values(2)
    first.assert_values(0, 1, 2)
    empty = BehaviorProcessor[int]()
    third = TestSubscriber[int](initial_request=10)
    empty.subscribe(third)
    third.assert_no_values()
    with pytest.raises(NullSignalError):
        BehaviorProcessor[int](initial=None)
    with pytest.raises(ValueError, match="size"):
        ReplayProcessor[int](size=-1)
