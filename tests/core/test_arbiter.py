"""ArbiterSubscriber's switching: trampolined, and never holding the loop."""

from __future__ import annotations

import asyncio

from reactive_aio import Flux
from reactive_aio._core import SYNC_SWITCHES
from reactive_aio.testing import TestSubscriber


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
