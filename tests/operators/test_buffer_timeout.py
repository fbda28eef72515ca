"""buffer_timeout on virtual time: size-or-time batches that respect demand."""

from __future__ import annotations

import asyncio

import pytest

from reactive_aio import MAX_DEMAND, Flux
from reactive_aio.testing import (
    StepVerifier,
    TestPublisher,
    TestSubscriber,
    cold,
    expect_marbles,
    run_virtual,
)

V = {"x": ["a", "b"], "y": ["c"], "z": ["d", "e"], "w": ["f"]}


def test_cut_when_full_or_when_time_is_up() -> None:
    async def main() -> None:
        # ab fills a batch; c waits 3 s from its arrival; de fills; f is flushed by completion.
        await expect_marbles(cold("ab-c----de-f|").buffer_timeout(2, 3.0), "-x----y--z--(w|)", V)

    run_virtual(main)


def test_upstream_asked_for_size_times_demand() -> None:
    async def main() -> None:
        tp = TestPublisher[int].create()
        ts = TestSubscriber[list[int]](initial_request=0)
        Flux.from_publisher(tp).buffer_timeout(10, 1.0).subscribe(ts)
        assert tp.requests == []
        ts.request(2)
        assert tp.requests == [20]
        ts.request(MAX_DEMAND)
        assert tp.requests[-1] == MAX_DEMAND

    run_virtual(main)


def test_due_batches_are_held_until_requested() -> None:
    async def main() -> None:
        tp = TestPublisher[int].create()
        await (
            StepVerifier.create(Flux.from_publisher(tp).buffer_timeout(3, 1.0), initial_request=1)
            .then(lambda: tp.next(1))
            .expect_next([1])  # cut by time: one demand used, two upstream items unused
            .then(lambda: tp.next(2, 3))
            .expect_no_event(5)  # due, but downstream has no demand: held, not dropped
            .then_request(1)
            .expect_next([2, 3])
            .then_cancel()
            .verify()
        )
        tp.assert_cancelled()

    run_virtual(main)


def test_error_after_the_partial_batch_within_demand() -> None:
    async def main() -> None:
        failure = OSError("down")
        await expect_marbles(
            cold("a-#", error=failure).buffer_timeout(5, 10.0),
            "--(x#)",
            {"x": ["a"]},
            error=failure,
        )

    run_virtual(main)


def test_cancel_drops_the_batch_and_timer() -> None:
    async def main() -> None:
        tp = TestPublisher[int].create()
        ts = TestSubscriber[list[int]](initial_request=5)
        Flux.from_publisher(tp).buffer_timeout(5, 1.0).subscribe(ts)
        tp.next(1)
        ts.cancel()
        tp.assert_cancelled()
        await asyncio.sleep(5)
        ts.assert_no_values()

    run_virtual(main)


def test_request_zero_is_an_error() -> None:
    async def main() -> None:
        await (
            StepVerifier.create(Flux.never().buffer_timeout(2, 1.0), initial_request=0)
            .then_request(0)
            .expect_error(ValueError, match="3.9")
            .verify()
        )

    run_virtual(main)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="max_size"):
        Flux.never().buffer_timeout(0, 1.0)
    with pytest.raises(ValueError, match="max_time"):
        Flux.never().buffer_timeout(1, 0)


async def test_real_loop_batches() -> None:
    batches = await Flux.range(0, 10).buffer_timeout(4, 0.001).to_list()
    assert batches == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


def test_unused_demand_of_a_timed_out_batch_stays_outstanding() -> None:
    """Deliberate choice (unlike Reactor's fair variant, which credits it): a batch cut by the
    timer leaves its unused demand upstream, and the next request asks ``max_size`` again."""

    async def main() -> None:
        tp = TestPublisher[int].create()
        ts = TestSubscriber[list[int]](initial_request=1)
        Flux.from_publisher(tp).buffer_timeout(3, 1.0).subscribe(ts)
        assert tp.requests == [3]
        tp.next(1)
        await asyncio.sleep(1.0)
        ts.assert_values([1])
        assert tp.demand == 2  # still outstanding
        ts.request(1)
        assert tp.requests == [3, 3]
        ts.cancel()

    run_virtual(main)
