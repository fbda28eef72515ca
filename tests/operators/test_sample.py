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


# -- sample(sampler); ``test_reactor_*`` ported from reactor-core's FluxSampleTest -----------


def _sampled(
    *, complete: bool, main_ends: bool
) -> tuple[TestPublisher[int], TestPublisher[str], TestSubscriber[int]]:
    main = TestPublisher[int].create()
    sampler = TestPublisher[str].create()
    ts = TestSubscriber[int](initial_request=100)
    Flux.from_publisher(main).sample(sampler).subscribe(ts)
    main.next(1)
    ts.assert_no_values()
    sampler.next("first")
    ts.assert_values(1)
    sampler.next("second")  # nothing new since the first
    main.next(2)
    ts.assert_values(1)
    sampler.next("third")
    ts.assert_values(1, 2).assert_not_terminated()
    ending: TestPublisher[int] | TestPublisher[str] = main if main_ends else sampler
    if complete:
        ending.complete()
    else:
        ending.error(RuntimeError("forced failure"))
    return main, sampler, ts


@pytest.mark.parametrize("main_ends", [True, False])
async def test_reactor_normal_completion(main_ends: bool) -> None:
    main, sampler, ts = _sampled(complete=True, main_ends=main_ends)
    ts.assert_values(1, 2).assert_complete()
    assert (sampler if main_ends else main).cancelled


@pytest.mark.parametrize("main_ends", [True, False])
async def test_reactor_error(main_ends: bool) -> None:
    main, sampler, ts = _sampled(complete=False, main_ends=main_ends)
    ts.assert_values(1, 2).assert_error(RuntimeError)
    assert (sampler if main_ends else main).cancelled


async def test_sampler_completion_emits_the_unsampled_item() -> None:
    main = TestPublisher[int].create()
    sampler = TestPublisher[str].create()
    ts = TestSubscriber[int](initial_request=100)
    Flux.from_publisher(main).sample(sampler).subscribe(ts)
    main.next(1, 2)
    sampler.complete()
    ts.assert_values(2).assert_complete()
    assert main.cancelled


async def test_sample_by_an_interval_publisher() -> None:
    source = Flux.just(1, 2, 3).concat_with(Flux.never())
    assert await source.sample(Flux.timer(0.01)).to_list() == [3]
