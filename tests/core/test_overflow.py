"""OverflowDrain and OverflowSubscriber: a BufferDrain that applies an Overflow policy (the
library's own configuration of the buffer mechanism, behind create and on_backpressure_*)."""

from __future__ import annotations

import asyncio

import attrs
import pytest

from reactive_aio import MAX_DEMAND, MissingBackpressureError, Overflow
from reactive_aio._core import OverflowDrain, OverflowSubscriber, OverflowThen
from reactive_aio.testing import TestPublisher, TestSubscriber


@attrs.define(eq=False)
class _Producer(OverflowDrain[int]):
    stopped: int = attrs.field(default=0, init=False)

    def _cancel_source(self) -> None:
        self.stopped += 1


def _produce(ts: TestSubscriber[int], policy: Overflow) -> _Producer:
    drain = _Producer(ts, policy=policy)
    drain.start()
    return drain


@pytest.mark.parametrize(
    ("then", "kept", "results"),
    [
        ("drop_oldest", [3, 4], [True, True, True, True]),
        ("drop_latest", [1, 2], [True, True, False, False]),
    ],
)
async def test_a_full_buffer_drops_by_its_policy_and_keeps_exact_counts(
    then: OverflowThen, kept: list[int], results: list[bool]
) -> None:
    ts = TestSubscriber[int]()
    drain = _produce(ts, Overflow.BUFFER(2, then=then))
    assert [drain.offer(i) for i in (1, 2, 3, 4)] == results
    assert (drain.offered, drain.dropped, drain.buffered) == (4, 2, 2)
    ts.request(5)
    ts.assert_values(*kept)
    assert drain.offered == drain.delivered + drain.dropped + drain.buffered


async def test_an_error_policy_stops_the_source_and_fails_after_the_buffered_items() -> None:
    ts = TestSubscriber[int]()
    drain = _produce(ts, Overflow.BUFFER(1))
    assert drain.offer(1)
    assert not drain.offer(2)
    assert drain.stopped == 1
    ts.request(1)
    ts.assert_values(1).assert_error(MissingBackpressureError, match="buffer of 1 items is full")


async def test_what_the_policy_drops_goes_to_on_dropped_and_its_error_fails_the_stream() -> None:
    ts = TestSubscriber[int]()
    seen: list[int] = []

    def on_dropped(item: int) -> None:
        seen.append(item)
        if item == 3:
            raise ValueError("no more")

    drain = _Producer(ts, policy=Overflow.DROP, on_dropped=on_dropped)
    drain.start()
    drain.offer(2)
    drain.offer(3)
    assert seen == [2, 3]
    ts.assert_error(ValueError, match="no more")


async def test_offers_from_a_thread_keep_what_demand_and_the_buffer_allow() -> None:
    ts = TestSubscriber[int](initial_request=2)
    drain = _produce(ts, Overflow.LATEST)

    def produce() -> None:
        for i in range(100):
            drain.offer_threadsafe(i)

    await asyncio.to_thread(produce)
    await ts.wait_for_values(2)
    await asyncio.sleep(0)
    ts.request(1)
    await ts.wait_for_values(3)
    assert ts.values[:2] == [0, 1]
    assert ts.values[2] == 99  # LATEST keeps the newest undelivered
    assert drain.offered + drain.dropped_off_loop == 100


async def test_an_overflow_subscriber_asks_for_everything_and_serves_demand_from_its_buffer() -> (
    None
):
    source = TestPublisher[int].create()
    ts = TestSubscriber[int](initial_request=1)
    drain = OverflowSubscriber[int](ts, policy=Overflow.BUFFER(1, then="drop_oldest"))
    drain.start()  # downstream first: the upstream may signal inside subscribe
    source.subscribe(drain)
    assert source.requests == [MAX_DEMAND]
    source.next(1, 2, 3)
    source.complete()
    ts.assert_values(1).assert_not_terminated()
    ts.request(5)
    ts.assert_values(1, 3).assert_complete()


async def test_an_overflow_subscriber_cancels_its_upstream_when_cancelled() -> None:
    ts = TestSubscriber[int]()
    upstream = TestPublisher[int].create()
    drain = OverflowSubscriber[int](ts, policy=Overflow.ERROR)
    drain.start()
    upstream.subscribe(drain)
    ts.cancel()
    upstream.assert_cancelled()
