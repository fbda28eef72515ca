"""timeout on virtual time: per-item deadline, fallback switch, demand hand-over."""

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


def test_items_in_time_pass() -> None:
    async def main() -> None:
        await expect_marbles(cold("-a--b-|").timeout(3.0), "-a--b-|")

    run_virtual(main)


def test_a_late_item_fails_with_timeout_error() -> None:
    async def main() -> None:
        tp = TestPublisher[str].create()
        await (
            StepVerifier.create(Flux.from_publisher(tp).timeout(2.0))
            .then(lambda: tp.next("a"))
            .expect_next("a")
            .expect_no_event(1.9)
            .expect_error(TimeoutError, match="no item within 2.0 s")
            .verify()
        )
        tp.assert_cancelled()

    run_virtual(main)


def test_the_first_item_is_timed_from_subscribe() -> None:
    async def main() -> None:
        failure = TimeoutError("timeout: no item within 2.0 s")
        await expect_marbles(cold("---a|").timeout(2.0), "--#", error=failure)

    run_virtual(main)


def test_switches_to_the_fallback_with_unserved_demand() -> None:
    async def main() -> None:
        main_source = TestPublisher[int].create()
        fallback = TestPublisher[int].create()
        await (
            StepVerifier.create(
                Flux.from_publisher(main_source).timeout(1.0, fallback=fallback),
                initial_request=5,
            )
            .then(lambda: main_source.next(1, 2))
            .expect_next(1, 2)
            .then_await(1.0)
            .then(lambda: fallback.assert_requested(3))
            .then(lambda: fallback.emit(10))
            .expect_next(10)
            .expect_complete()
            .verify()
        )
        main_source.assert_cancelled()

    run_virtual(main)


def test_no_timeout_after_switching() -> None:
    async def main() -> None:
        await expect_marbles(Flux.never().timeout(1.0, fallback=cold("----x|")), "-----x|")

    run_virtual(main)


def test_upstream_error_and_completion_disarm_the_timer() -> None:
    async def main() -> None:
        await expect_marbles(cold("a|").timeout(1.5), "a|")
        failure = OSError("down")
        await expect_marbles(cold("a#", error=failure).timeout(1.5), "a#", error=failure)

    run_virtual(main)


def test_cancel_disarms() -> None:
    async def main() -> None:
        ts = TestSubscriber[int](initial_request=1)
        Flux.never().timeout(1.0).subscribe(ts)
        ts.cancel()
        await asyncio.sleep(5)
        ts.assert_not_terminated()

    run_virtual(main)


def test_demand_passes_through_and_request_zero_fails() -> None:
    async def main() -> None:
        await (
            StepVerifier.create(Flux.range(0, 3).timeout(5.0), initial_request=0)
            .expect_no_event(1)
            .then_request(1)
            .expect_next(0)
            .then_request(0)
            .expect_error(ValueError, match="3.9")
            .verify()
        )

    run_virtual(main)


def test_bad_seconds_rejected() -> None:
    with pytest.raises(ValueError, match="timeout"):
        Flux.never().timeout(0)
