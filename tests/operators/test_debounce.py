"""debounce on virtual time."""

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


def test_emits_after_quiet_period() -> None:
    async def main() -> None:
        await expect_marbles(cold("ab-----cd-----|").debounce(2.0), "---b------d---|")

    run_virtual(main)


def test_completion_flushes_the_waiting_item() -> None:
    async def main() -> None:
        await expect_marbles(cold("a-b|").debounce(5.0), "---(b|)")

    run_virtual(main)


def test_an_hour_of_silence_costs_nothing() -> None:
    async def main() -> None:
        await expect_marbles(cold("a-b|").debounce(3600.0), "---(b|)")
        tp = TestPublisher[int].create()
        ts = TestSubscriber[int](initial_request=1)
        Flux.from_publisher(tp).debounce(3600.0).subscribe(ts)
        start = asyncio.get_running_loop().time()
        tp.next(1)
        await asyncio.sleep(3599)
        ts.assert_no_values()
        await ts.wait_for_values(1)
        ts.assert_values(1)
        assert asyncio.get_running_loop().time() == start + 3600.0

    run_virtual(main)


def test_holds_due_items_until_requested() -> None:
    async def main() -> None:
        await (
            StepVerifier.create(cold("a--b--").debounce(1.0), initial_request=0)
            .expect_no_event(5)
            .then_request(2)
            .expect_next("a", "b")
            .then_cancel()
            .verify()
        )

    run_virtual(main)


def test_too_many_held_items_overflow() -> None:
    async def main() -> None:
        await (
            StepVerifier.create(Flux.interval(1.0).debounce(0.5), initial_request=0)
            .expect_error(MissingBackpressureError, match="debounce")
            .verify(timeout=1000)
        )

    run_virtual(main)


def test_upstream_error_passes_at_once() -> None:
    async def main() -> None:
        failure = OSError("down")
        await expect_marbles(cold("a-#", error=failure).debounce(5.0), "--#", error=failure)

    run_virtual(main)


def test_cancel_cancels_upstream_and_timer() -> None:
    async def main() -> None:
        tp = TestPublisher[int].create()
        ts = TestSubscriber[int](initial_request=5)
        Flux.from_publisher(tp).debounce(1.0).subscribe(ts)
        tp.next(1)
        ts.cancel()
        tp.assert_cancelled()
        await asyncio.sleep(5)
        ts.assert_no_values()

    run_virtual(main)


def test_raising_subscriber_is_reported_and_upstream_cancelled() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        reported: list[object] = []
        loop.set_exception_handler(lambda _, context: reported.append(context["exception"]))
        tp = TestPublisher[int].create()

        def explode(item: int) -> None:
            raise ZeroDivisionError(item)

        Flux.from_publisher(tp).debounce(1.0).subscribe(
            TestSubscriber[int](initial_request=5, on_next_callback=explode)
        )
        tp.next(1)
        await asyncio.sleep(2)
        tp.assert_cancelled()
        assert any(isinstance(error, ZeroDivisionError) for error in reported)

    run_virtual(main)


def test_request_zero_is_an_error() -> None:
    async def main() -> None:
        await (
            StepVerifier.create(Flux.never().debounce(1.0), initial_request=0)
            .then_request(0)
            .expect_error(ValueError, match="3.9")
            .verify()
        )

    run_virtual(main)


def test_negative_timeout_rejected() -> None:
    with pytest.raises(ValueError, match="timeout"):
        Flux.never().debounce(-1)


# -- debounce(selector); ``test_reactor_*`` ported from reactor-core's FluxSampleTimeoutTest --


async def test_reactor_normal() -> None:
    main = TestPublisher[int].create()
    quiet_one = TestPublisher[str].create()
    quiet_rest = TestPublisher[str].create()
    ts = TestSubscriber[int](initial_request=100)
    Flux.from_publisher(main).debounce(lambda v: quiet_one if v == 1 else quiet_rest).subscribe(ts)
    main.next(1)
    ts.assert_no_values()
    quiet_one.next("over")
    ts.assert_values(1)
    assert quiet_one.cancelled  # its first item is all that counts
    main.next(2, 3, 4)  # each cancels the previous item's publisher
    quiet_rest.next("over")
    ts.assert_values(1, 4)
    main.next(5)
    main.complete()
    ts.assert_values(1, 4, 5).assert_complete()


async def test_a_quiet_publisher_that_completes_emits_the_item() -> None:
    ts = TestSubscriber[int](initial_request=100)
    source = Flux.just(1, 2, 3).concat_with(Flux.never())
    source.debounce(lambda v: Flux.empty() if v == 3 else Flux.never()).subscribe(ts)
    ts.assert_values(3).assert_not_terminated()
    ts.cancel()


async def test_a_failing_selector_cancels_upstream_and_fails() -> None:
    main = TestPublisher[int].create()
    ts = TestSubscriber[int](initial_request=100)
    Flux.from_publisher(main).debounce(lambda v: Flux.error(OSError("quiet"))).subscribe(ts)
    main.next(1)
    ts.assert_no_values().assert_error(OSError)
    assert main.cancelled


async def test_debounce_by_a_timer_per_item() -> None:
    items = await Flux.just(1, 2, 3).debounce(lambda v: Flux.timer(0.01)).to_list()
    assert items == [3]
