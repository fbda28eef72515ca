"""window_timeout on virtual time: size-or-time windows that respect demand."""

from __future__ import annotations

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

V = {"x": ["a", "b"], "y": ["c"], "z": ["d", "e"], "w": ["f"]}


def test_closed_when_full_or_when_time_is_up() -> None:
    async def main() -> None:
        windows = cold("ab-c----de-f|").window_timeout(2, 3.0)
        await expect_marbles(windows.concat_map(lambda w: w.to_list()), "-x----y--z--(w|)", V)

    run_virtual(main)


def test_each_window_has_its_own_demand() -> None:
    async def main() -> None:
        outer = TestSubscriber[Flux[int]](initial_request=1)
        Flux.range(0, 10).window_timeout(4, 1.0).subscribe(outer)
        await outer.wait_for_values(1)
        inner = TestSubscriber[int]()
        outer.values[0].subscribe(inner)
        inner.assert_no_values()
        inner.request(2)
        inner.assert_values(0, 1)
        inner.request(5)
        inner.assert_values(0, 1, 2, 3).assert_complete()

    run_virtual(main)


def test_a_window_opened_without_demand_is_held() -> None:
    async def main() -> None:
        tp = TestPublisher[int].create()
        ts = await (
            StepVerifier.create(Flux.from_publisher(tp).window_timeout(3, 1.0), initial_request=1)
            .then(lambda: tp.next(1))
            .expect_next_count(1)
            .then_await(2)  # closed by time: one demand used, two upstream items unused
            .then(lambda: tp.next(2))
            .expect_no_event(5)  # a new window opened, held for lack of demand
            .then_request(1)
            .expect_next_count(1)
            .then_cancel()
            .verify()
        )
        assert await ts.values[0].to_list() == [1]
        assert await ts.values[1].to_list() == [2]  # completed by the outer cancel
        tp.assert_cancelled()

    run_virtual(main)


def test_upstream_error_reaches_the_open_window_and_the_outer() -> None:
    async def main() -> None:
        tp = TestPublisher[int].create()
        outer = TestSubscriber[Flux[int]](initial_request=5)
        Flux.from_publisher(tp).window_timeout(5, 10.0).subscribe(outer)
        tp.next(1).error(OSError("down"))
        outer.assert_error(OSError)
        inner = TestSubscriber[int](initial_request=5)
        outer.values[0].subscribe(inner)
        inner.assert_values(1).assert_error(OSError)

    run_virtual(main)


def test_request_zero_is_an_error() -> None:
    async def main() -> None:
        await (
            StepVerifier.create(Flux.never().window_timeout(2, 1.0), initial_request=0)
            .then_request(0)
            .expect_error(ValueError, match="3.9")
            .verify()
        )

    run_virtual(main)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="max_size"):
        Flux.never().window_timeout(0, 1.0)
    with pytest.raises(ValueError, match="max_time"):
        Flux.never().window_timeout(1, 0)
