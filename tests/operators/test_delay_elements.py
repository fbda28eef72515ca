"""delay_elements on virtual time."""

from __future__ import annotations

import asyncio

import pytest

from reactive_aio import Flux
from reactive_aio.testing import (
    StepVerifier,
    TestPublisher,
    TestSubscriber,
    expect_marbles,
    run_virtual,
)


def test_each_item_is_delayed_and_spaced() -> None:
    async def main() -> None:
        await expect_marbles(Flux.just("a", "b", "c").delay_elements(2.0), "--a-b-(c|)")

    run_virtual(main)


def test_one_item_at_a_time_and_only_on_demand() -> None:
    async def main() -> None:
        tp = TestPublisher[int].create()

        def nothing_requested() -> None:
            assert tp.requests == []

        await (
            StepVerifier.create(Flux.from_publisher(tp).delay_elements(1.0), initial_request=0)
            .then(nothing_requested)
            .then_request(3)
            .then(lambda: tp.next(1))
            .expect_no_event(0.5)
            .expect_next(1)
            .then(lambda: tp.next(2))
            .expect_next(2)
            .then_cancel()
            .verify()
        )
        assert tp.requests == [1, 1, 1]
        tp.assert_cancelled()

    run_virtual(main)


def test_completion_waits_for_the_item_in_flight() -> None:
    async def main() -> None:
        tp = TestPublisher[int].create()
        ts = TestSubscriber[int](initial_request=5)
        Flux.from_publisher(tp).delay_elements(1.0).subscribe(ts)
        tp.next(7).complete()
        ts.assert_not_terminated()
        await ts.wait_terminated()
        ts.assert_values(7).assert_complete()

    run_virtual(main)


def test_error_waits_for_the_item_in_flight() -> None:
    async def main() -> None:
        tp = TestPublisher[int].create()
        ts = TestSubscriber[int](initial_request=5)
        Flux.from_publisher(tp).delay_elements(1.0).subscribe(ts)
        tp.next(7).error(OSError("down"))
        await ts.wait_terminated()
        ts.assert_values(7).assert_error(OSError)

    run_virtual(main)


def test_cancel_drops_the_item_in_flight() -> None:
    async def main() -> None:
        ts = TestSubscriber[int](initial_request=5)
        Flux.just(1, 2).delay_elements(1.0).subscribe(ts)
        ts.cancel()
        await asyncio.sleep(5)
        ts.assert_no_values().assert_not_terminated()

    run_virtual(main)


def test_request_zero_is_an_error() -> None:
    async def main() -> None:
        await (
            StepVerifier.create(Flux.never().delay_elements(1.0), initial_request=0)
            .then_request(0)
            .expect_error(ValueError, match="3.9")
            .verify()
        )

    run_virtual(main)


def test_negative_delay_rejected() -> None:
    with pytest.raises(ValueError, match="delay"):
        Flux.never().delay_elements(-1)


def test_request_from_on_next_keeps_the_last_item() -> None:
    async def main() -> None:
        ts = TestSubscriber[int](initial_request=1)
        ts.on_next_callback = lambda _: ts.request(1)
        Flux.range(0, 5).delay_elements(1.0).subscribe(ts)
        await ts.wait_terminated(timeout=60)
        ts.assert_values(0, 1, 2, 3, 4).assert_complete()

    run_virtual(main)
