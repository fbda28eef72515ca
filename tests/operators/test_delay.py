"""delay (shift every signal) on virtual time."""

from __future__ import annotations

import asyncio

import pytest

from reactive_aio import Flux
from reactive_aio.testing import (
    StepVerifier,
    TestPublisher,
    TestSubscriber,
    cold,
    expect_marbles,
    run_virtual,
)


def test_shifts_every_signal_and_keeps_spacing() -> None:
    async def main() -> None:
        await expect_marbles(cold("a-b--c|").delay(2.0), "--a-b--c|")

    run_virtual(main)


def test_error_is_shifted_after_the_items() -> None:
    async def main() -> None:
        failure = OSError("down")
        await expect_marbles(cold("a#", error=failure).delay(3.0), "---a#", error=failure)

    run_virtual(main)


def test_demand_passes_through() -> None:
    async def main() -> None:
        tp = TestPublisher[int].create()
        await (
            StepVerifier.create(Flux.from_publisher(tp).delay(1.0), initial_request=0)
            .expect_no_event(1)
            .then_request(2)
            .then(lambda: tp.next(1, 2))
            .expect_no_event(0.5)
            .expect_next(1, 2)
            .then_cancel()
            .verify()
        )
        assert tp.requests == [2]
        tp.assert_cancelled()

    run_virtual(main)


def test_cancel_drops_pending_signals() -> None:
    async def main() -> None:
        ts = TestSubscriber[int](initial_request=5)
        Flux.just(1, 2).delay(1.0).subscribe(ts)
        ts.cancel()
        await asyncio.sleep(5)
        ts.assert_no_values().assert_not_terminated()

    run_virtual(main)


def test_request_zero_is_an_error() -> None:
    async def main() -> None:
        await (
            StepVerifier.create(Flux.range(0, 2).delay(1.0), initial_request=0)
            .then_request(0)
            .expect_error(ValueError, match="3.9")
            .verify()
        )

    run_virtual(main)


def test_negative_delay_rejected() -> None:
    with pytest.raises(ValueError, match="delay"):
        Flux.never().delay(-1)
