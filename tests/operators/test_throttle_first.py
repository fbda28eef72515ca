"""throttle_first on virtual time."""

from __future__ import annotations

import pytest

from reactive_aio import Flux
from reactive_aio.testing import StepVerifier, TestPublisher, cold, expect_marbles, run_virtual


def test_first_item_then_a_closed_window() -> None:
    async def main() -> None:
        await expect_marbles(cold("abc-d-ef-g|").throttle_first(3.0), "a---d--f--|")

    run_virtual(main)


def test_item_at_the_window_edge_passes() -> None:
    async def main() -> None:
        await expect_marbles(cold("a-b-c|").throttle_first(2.0), "a-b-c|")

    run_virtual(main)


def test_demand_passes_through_and_drops_are_re_requested() -> None:
    async def main() -> None:
        tp = TestPublisher[int].create()
        await (
            StepVerifier.create(Flux.from_publisher(tp).throttle_first(2.0), initial_request=0)
            .expect_no_event(1)
            .then_request(2)
            .then(lambda: tp.next(1))
            .expect_next(1)
            .then(lambda: tp.next(2))  # inside the window: dropped, and asked for again
            .expect_no_event(3)
            .then(lambda: tp.next(3))
            .expect_next(3)
            .then_cancel()
            .verify()
        )
        assert tp.requests == [2, 1]
        tp.assert_cancelled()

    run_virtual(main)


def test_upstream_error_and_cancel() -> None:
    async def main() -> None:
        failure = OSError("down")
        await expect_marbles(cold("a-#", error=failure).throttle_first(1.0), "a-#", error=failure)
        tp = TestPublisher[int].create()
        await (
            StepVerifier.create(Flux.from_publisher(tp).throttle_first(1.0))
            .then(lambda: tp.next(1))
            .expect_next(1)
            .then_cancel()
            .verify()
        )
        tp.assert_cancelled()

    run_virtual(main)


def test_request_zero_is_an_error() -> None:
    async def main() -> None:
        await (
            StepVerifier.create(Flux.never().throttle_first(1.0), initial_request=0)
            .then_request(0)
            .expect_error(ValueError, match="3.9")
            .verify()
        )

    run_virtual(main)


def test_negative_window_rejected() -> None:
    with pytest.raises(ValueError, match="window"):
        Flux.never().throttle_first(-1)
