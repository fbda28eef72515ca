"""sample / throttle_last on virtual time."""

from __future__ import annotations

import asyncio

import pytest

from reactive_aio import Flux, MissingBackpressureError
from reactive_aio.testing import (
    StepVerifier,
    TestPublisher,
    TestSubscriber,
    cold,
    expect_marbles,
    run_virtual,
)


def test_latest_item_of_each_period() -> None:
    async def main() -> None:
        await expect_marbles(cold("ab--c---d-|").sample(3.0), "---b--c--d|")
        await expect_marbles(cold("ab--c---d-|").throttle_last(3.0), "---b--c--d|")

    run_virtual(main)


def test_completion_emits_the_unsampled_item() -> None:
    async def main() -> None:
        await expect_marbles(cold("a|").sample(10.0), "-(a|)")

    run_virtual(main)


def test_held_until_requested_then_overflow() -> None:
    async def main() -> None:
        await (
            StepVerifier.create(Flux.interval(1.0).sample(1.0), initial_request=0)
            .expect_no_event(3)
            .then_request(2)
            .expect_next_count(2)
            .expect_error(MissingBackpressureError, match="sample")
            .verify(timeout=1000)
        )

    run_virtual(main)


def test_upstream_error_passes() -> None:
    async def main() -> None:
        failure = OSError("down")
        await expect_marbles(cold("a-#", error=failure).sample(5.0), "--#", error=failure)

    run_virtual(main)


def test_cancel_stops_sampling() -> None:
    async def main() -> None:
        tp = TestPublisher[int].create()
        ts = TestSubscriber[int](initial_request=5)
        Flux.from_publisher(tp).sample(1.0).subscribe(ts)
        tp.next(1)
        ts.cancel()
        tp.assert_cancelled()
        await asyncio.sleep(5)
        ts.assert_no_values()

    run_virtual(main)


def test_request_zero_is_an_error() -> None:
    async def main() -> None:
        await (
            StepVerifier.create(Flux.never().sample(1.0), initial_request=0)
            .then_request(0)
            .expect_error(ValueError, match="3.9")
            .verify()
        )

    run_virtual(main)


def test_bad_period_rejected() -> None:
    with pytest.raises(ValueError, match="period"):
        Flux.never().sample(0)
