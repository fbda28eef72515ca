"""StepVerifier: scripted steps, demand, virtual time, clear failures."""

from __future__ import annotations

import pytest

from reactive_aio import Flux
from reactive_aio.testing import StepVerifier, TestPublisher, run_virtual

virtual = pytest.mark.asyncio(loop_factories=["virtual"])


async def test_items_demand_and_completion() -> None:
    await (
        StepVerifier.create(Flux.range(0, 5), initial_request=1)
        .expect_next(0)
        .then_request(2)
        .expect_next(1, 2)
        .then_request(10)
        .expect_next_count(1)
        .expect_next_matches(lambda v: v == 4, "four")
        .expect_complete()
        .verify()
    )


async def test_no_item_before_request() -> None:
    await (
        StepVerifier.create(Flux.range(0, 5), initial_request=0)
        .expect_no_event(0.01)
        .then_request(1)
        .expect_next(0)
        .then_cancel()
        .verify()
    )


async def test_error_step() -> None:
    await (
        StepVerifier.create(Flux.error(ValueError("boom")))
        .expect_error(ValueError, match="boom")
        .verify()
    )


async def test_then_runs_actions_against_a_test_publisher() -> None:
    tp = TestPublisher[str].create()
    await (
        StepVerifier.create(tp, initial_request=1)
        .then(lambda: tp.next("x"))
        .expect_next("x")
        .then(lambda: tp.error(OSError("gone")))
        .expect_error(OSError)
        .verify()
    )


async def test_wrong_item_names_step_and_signals() -> None:
    with pytest.raises(AssertionError, match=r"step 2 expect_next\(5\) failed.*next\(1\)"):
        await StepVerifier.create(Flux.range(0, 3)).expect_next(0, 5).verify()


async def test_wrong_terminal_is_reported() -> None:
    with pytest.raises(AssertionError, match="expected on_complete, got error"):
        await StepVerifier.create(Flux.error(KeyError("k"))).expect_complete().verify()
    with pytest.raises(AssertionError, match="expected 3 items, got 2 then complete"):
        await StepVerifier.create(Flux.range(0, 2)).expect_next_count(3).verify()


def test_missing_signal_times_out_on_virtual_time() -> None:
    async def main() -> None:
        await StepVerifier.create(Flux.never()).expect_complete().verify(timeout=30)

    with pytest.raises(AssertionError, match=r"step 1 expect_complete\(\): timed out after 30"):
        run_virtual(main)


def test_unexpected_event_is_reported() -> None:
    async def main() -> None:
        await StepVerifier.create(Flux.interval(1.0)).expect_no_event(1.5).verify()

    with pytest.raises(AssertionError, match=r"expected no event for 1.5 s, got next\(0\)"):
        run_virtual(main)


@virtual
async def test_an_hour_of_interval_in_virtual_time() -> None:
    await (
        StepVerifier.create(Flux.interval(3600), initial_request=2)
        .expect_no_event(3599)
        .expect_next(0)
        .then_await(3600)
        .expect_next(1)
        .then_cancel()
        .verify()
    )


def test_then_await_advances_a_manual_loop() -> None:
    async def main() -> None:
        await (
            StepVerifier.create(Flux.timer(10))
            .then_await(10)
            .expect_next(0)
            .expect_complete()
            .verify(timeout=0)
        )

    run_virtual(main, auto=False)


async def test_negative_initial_request_rejected() -> None:
    with pytest.raises(ValueError, match="initial_request"):
        StepVerifier.create(Flux.never(), initial_request=-1)
