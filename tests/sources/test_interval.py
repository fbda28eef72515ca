"""Flux.interval on virtual time: ticks, demand, overflow, cancellation."""

from __future__ import annotations

import asyncio

import pytest

from reactive_aio import Flux, MissingBackpressureError
from reactive_aio.testing import StepVerifier, TestSubscriber, expect_marbles, run_virtual


def test_ticks_every_period_without_drift() -> None:
    async def main() -> None:
        await expect_marbles(
            Flux.interval(2.0).take(3), "--a-b-(c|)", {"a": 0, "b": 1, "c": 2}, frame=1.0
        )

    run_virtual(main)


def test_initial_delay() -> None:
    async def main() -> None:
        await expect_marbles(Flux.interval(1.0, delay=3.0).take(2), "---a(b|)", {"a": 0, "b": 1})

    run_virtual(main)


def test_tick_without_demand_fails_with_missing_backpressure() -> None:
    async def main() -> None:
        await (
            StepVerifier.create(Flux.interval(1.0), initial_request=1)
            .expect_next(0)
            .expect_error(MissingBackpressureError, match="tick 1")
            .verify()
        )

    run_virtual(main)


def test_demand_requested_later_is_served() -> None:
    async def main() -> None:
        await (
            StepVerifier.create(Flux.interval(1.0), initial_request=0)
            .then_request(1)
            .expect_next(0)
            .then_request(1)
            .expect_next(1)
            .then_cancel()
            .verify()
        )

    run_virtual(main)


def test_cancel_stops_ticks() -> None:
    async def main() -> None:
        ts = TestSubscriber[int](initial_request=100)
        Flux.interval(1.0).subscribe(ts)
        await ts.wait_for_values(2)
        ts.cancel()
        await asyncio.sleep(10)
        ts.assert_values(0, 1).assert_not_terminated()

    run_virtual(main)


def test_request_zero_is_an_error() -> None:
    async def main() -> None:
        await (
            StepVerifier.create(Flux.interval(1.0), initial_request=0)
            .then_request(0)
            .expect_error(ValueError, match="3.9")
            .verify()
        )

    run_virtual(main)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="period"):
        Flux.interval(0)
    with pytest.raises(ValueError, match="delay"):
        Flux.interval(1, delay=-1)


def test_needs_a_running_loop() -> None:
    with pytest.raises(RuntimeError, match="running event loop"):
        Flux.interval(1).subscribe(TestSubscriber[int]())


async def test_real_loop_ticks() -> None:
    assert await Flux.interval(0.001).take(3).to_list() == [0, 1, 2]
