"""ArbiterSubscriber: one downstream subscription over upstreams taken one after another;
its switching is trampolined and never holds the loop."""

from __future__ import annotations

import asyncio

import attrs

from reactive_aio import Flux, Publisher
from reactive_aio._core import SYNC_SWITCHES
from reactive_aio.lowlevel import ArbiterSubscriber
from reactive_aio.testing import TestPublisher, TestSubscriber


@attrs.define(eq=False)
class _Then(ArbiterSubscriber[int]):
    """concat's shape: when an upstream completes, the next one follows."""

    following: list[Publisher[int]]
    ended: int = attrs.field(default=0, init=False)

    def on_complete(self) -> None:
        if self.following:
            self._switch_to(self.following.pop(0))
        else:
            self._finish_complete()

    def _on_end(self) -> None:
        self.ended += 1


async def test_the_next_upstream_is_asked_for_the_outstanding_demand_only() -> None:
    first, second = TestPublisher[int].create(), TestPublisher[int].create()
    ts = TestSubscriber[int]()
    arbiter = _Then(ts, [second])
    first.subscribe(arbiter)
    ts.request(5)
    first.next(1, 2)
    first.complete()
    assert second.requests == [3]  # five asked, two delivered
    second.next(3)
    second.complete()
    ts.assert_values(1, 2, 3).assert_complete()
    assert arbiter.ended == 1


async def test_switching_is_trampolined_over_publishers_that_end_inside_subscribe() -> None:
    ts = TestSubscriber[int](initial_request=10_000)
    ts.on_next_callback = lambda _: None
    arbiter = _Then(ts, [Flux.just(i) for i in range(1, 3_000)])
    Flux.just(0).subscribe(arbiter)
    await ts.wait_terminated()  # (it gives the loop a turn every SYNC_SWITCHES switches)
    ts.assert_value_count(3_000).assert_complete().assert_max_depth(1)


async def test_a_bad_request_fails_the_stream_and_cancels_the_upstream() -> None:
    source = TestPublisher[int].create()
    ts = TestSubscriber[int]()
    arbiter = _Then(ts, [])
    source.subscribe(arbiter)
    ts.request(0)
    ts.assert_error(ValueError, match="rule 3.9")
    source.assert_cancelled()
    assert arbiter.done
    assert arbiter.ended == 1


async def test_cancel_from_another_thread_runs_on_the_loop_and_ends_once() -> None:
    source = TestPublisher[int].create()
    ts = TestSubscriber[int](initial_request=1)
    arbiter = _Then(ts, [Flux.just(9)])
    source.subscribe(arbiter)
    await asyncio.to_thread(arbiter.cancel)
    await asyncio.sleep(0)
    source.assert_cancelled()
    source.complete()  # too late: nothing follows a cancel
    ts.assert_no_values().assert_not_terminated()
    arbiter.cancel()
    assert arbiter.ended == 1


async def test_retry_for_ever_of_a_synchronous_failure_yields_to_the_loop() -> None:
    subscribed = 0

    def count(_: object) -> None:
        nonlocal subscribed
        subscribed += 1

    ts = TestSubscriber[int](initial_request=1)
    Flux.error(OSError("down")).do_on_subscribe(count).retry().subscribe(ts)
    # subscribe returned: the first attempt, then as many as one pass subscribes in a row
    assert subscribed == 1 + SYNC_SWITCHES
    other_ran = asyncio.get_running_loop().create_future()
    asyncio.get_running_loop().call_soon(other_ran.set_result, None)
    await other_ran  # the loop runs other callbacks between passes
    assert subscribed > 1 + SYNC_SWITCHES
    ts.assert_not_terminated()
    ts.cancel()
    seen = subscribed
    await asyncio.sleep(0)
    assert subscribed == seen  # cancelled: no pass is left pending


async def test_demand_asked_between_passes_goes_to_the_next_upstream() -> None:
    ts = TestSubscriber[int](initial_request=1)
    Flux.just(7).repeat(2 * SYNC_SWITCHES).subscribe(ts)
    ts.assert_value_count(1)
    ts.request(100)  # the round that follows the yield is asked for it
    for _ in range(10):
        await asyncio.sleep(0)
    ts.assert_value_count(1 + 2 * SYNC_SWITCHES).assert_complete()
