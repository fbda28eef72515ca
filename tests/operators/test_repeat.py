"""repeat(n): n further subscriptions after the first (Reactor's meaning). ``test_reactor_*``
cases are ported from reactor-core's ``FluxRepeatTest``."""

from __future__ import annotations

import asyncio

import pytest

from reactive_aio import Flux
from reactive_aio._core import SYNC_SWITCHES
from reactive_aio.testing import TestPublisher, TestSubscriber

from ._transform_support import Probe


async def test_reactor_two_repeat() -> None:
    assert await Flux.range(1, 5).repeat(2).to_list() == [1, 2, 3, 4, 5] * 3


async def test_reactor_two_repeat_normal() -> None:
    assert await Flux.just("test", "test2", "test3").repeat(2).count() == 9


async def test_reactor_one_repeat_backpressured() -> None:
    ts = TestSubscriber[int]()
    Flux.range(1, 10).repeat(1).subscribe(ts)
    ts.assert_no_values().assert_not_terminated()
    ts.request(2)
    ts.assert_values(1, 2)
    ts.request(3)
    ts.assert_values(1, 2, 3, 4, 5)
    ts.request(10)
    ts.assert_values(*range(1, 11), *range(1, 6)).assert_not_terminated()
    ts.request(100)
    ts.assert_values(*range(1, 11), *range(1, 11)).assert_complete()


async def test_repeat_zero_plays_once() -> None:
    probe = Probe(3)
    assert await Flux.from_publisher(probe).repeat(0).to_list() == [0, 1, 2]
    assert probe.subscribes == 1


async def test_repeat_asks_each_round_for_the_outstanding_demand_only() -> None:
    probe = Probe(3)
    ts = TestSubscriber[int](initial_request=7)
    Flux.from_publisher(probe).repeat(2).subscribe(ts)
    ts.assert_values(0, 1, 2, 0, 1, 2, 0).assert_not_terminated()
    assert probe.requests == [7, 4, 1]


async def test_repeat_without_times_until_cancelled() -> None:
    ts = TestSubscriber[int](initial_request=10)
    Flux.just(1, 2).repeat().subscribe(ts)
    ts.assert_values(*[1, 2] * 5).assert_not_terminated()
    ts.cancel()


async def test_repeat_stops_at_an_error() -> None:
    probe = Probe(2, OSError("x"))
    ts = TestSubscriber[int](initial_request=10)
    Flux.from_publisher(probe).repeat(3).subscribe(ts)
    ts.assert_values(0, 1).assert_error(OSError)
    assert probe.subscribes == 1


async def test_repeat_cancel_reaches_the_current_round() -> None:
    source = TestPublisher[int].create()
    ts = TestSubscriber[int](initial_request=1)
    Flux.from_publisher(source).repeat(1).subscribe(ts)
    ts.cancel()
    source.assert_cancelled()


def test_repeat_refuses_negative_times() -> None:
    with pytest.raises(ValueError, match="repeat times"):
        Flux.just(1).repeat(-1)


async def test_repeat_for_ever_of_a_synchronous_source_yields_to_the_loop() -> None:
    ts = TestSubscriber[int](initial_request=2**63 - 1)
    Flux.just(1).repeat().subscribe(ts)
    # the first round, then as many as the arbiter subscribes in a row: subscribe returned
    ts.assert_value_count(1 + SYNC_SWITCHES)
    await asyncio.sleep(0)  # the loop runs the next pass
    ts.assert_value_count(1 + 2 * SYNC_SWITCHES).assert_not_terminated()
    ts.cancel()
    await asyncio.sleep(0)
    ts.assert_value_count(1 + 2 * SYNC_SWITCHES)
