"""Flux.timer on virtual time."""

from __future__ import annotations

import asyncio

import pytest

from reactive_aio import Flux
from reactive_aio.testing import StepVerifier, TestSubscriber, expect_marbles, run_virtual


def test_emits_zero_after_delay() -> None:
    async def main() -> None:
        await expect_marbles(Flux.timer(3.0), "---(a|)", {"a": 0})

    run_virtual(main)


def test_holds_the_item_until_requested() -> None:
    async def main() -> None:
        await (
            StepVerifier.create(Flux.timer(1.0), initial_request=0)
            .expect_no_event(5)
            .then_request(1)
            .expect_next(0)
            .expect_complete()
            .verify()
        )

    run_virtual(main)


def test_cancel_before_the_delay() -> None:
    async def main() -> None:
        ts = TestSubscriber[int](initial_request=1)
        Flux.timer(5).subscribe(ts)
        ts.cancel()
        await asyncio.sleep(10)
        ts.assert_no_values().assert_not_terminated()

    run_virtual(main)


def test_request_zero_is_an_error() -> None:
    async def main() -> None:
        await (
            StepVerifier.create(Flux.timer(1.0), initial_request=0)
            .then_request(0)
            .expect_error(ValueError, match="3.9")
            .verify()
        )

    run_virtual(main)


def test_negative_delay_rejected() -> None:
    with pytest.raises(ValueError, match="delay"):
        Flux.timer(-1)
