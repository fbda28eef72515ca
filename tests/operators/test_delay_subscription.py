"""delay_subscription on virtual time."""

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


def test_subscribes_after_the_delay() -> None:
    async def main() -> None:
        await expect_marbles(cold("a-b|").delay_subscription(2.0), "--a-b|")

    run_virtual(main)


def test_demand_during_the_delay_is_forwarded() -> None:
    async def main() -> None:
        tp = TestPublisher[int].create()
        ts = TestSubscriber[int]()
        Flux.from_publisher(tp).delay_subscription(1.0).subscribe(ts)
        ts.request(0 + 2)
        tp.assert_subscribers(0)
        await asyncio.sleep(1.0)
        tp.assert_subscribers(1).assert_requested(2)
        ts.request(1)
        assert tp.requests == [2, 1]

    run_virtual(main)


def test_no_items_before_request() -> None:
    async def main() -> None:
        await (
            StepVerifier.create(Flux.range(0, 3).delay_subscription(1.0), initial_request=0)
            .expect_no_event(2)
            .then_request(1)
            .expect_next(0)
            .then_request(5)
            .expect_next(1, 2)
            .expect_complete()
            .verify()
        )

    run_virtual(main)


def test_cancel_during_the_delay_never_subscribes() -> None:
    async def main() -> None:
        tp = TestPublisher[int].create()
        ts = TestSubscriber[int](initial_request=1)
        Flux.from_publisher(tp).delay_subscription(1.0).subscribe(ts)
        ts.cancel()
        await asyncio.sleep(2)
        tp.assert_subscribers(0)

    run_virtual(main)


def test_cancel_after_subscribing_cancels_upstream() -> None:
    async def main() -> None:
        tp = TestPublisher[int].create()
        ts = TestSubscriber[int](initial_request=1)
        Flux.from_publisher(tp).delay_subscription(1.0).subscribe(ts)
        await asyncio.sleep(1)
        ts.cancel()
        tp.assert_cancelled()

    run_virtual(main)


def test_bad_request_during_the_delay_is_signalled() -> None:
    async def main() -> None:
        await (
            StepVerifier.create(Flux.range(0, 3).delay_subscription(1.0), initial_request=0)
            .then_request(-1)
            .expect_error(ValueError, match="3.9")
            .verify()
        )

    run_virtual(main)


def test_upstream_error_passes() -> None:
    async def main() -> None:
        await (
            StepVerifier.create(Flux.error(OSError("down")).delay_subscription(1.0))
            .expect_error(OSError, match="down")
            .verify()
        )

    run_virtual(main)


def test_negative_delay_rejected() -> None:
    with pytest.raises(ValueError, match="delay"):
        Flux.never().delay_subscription(-1)
