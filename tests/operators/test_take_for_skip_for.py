"""take_for and skip_for on virtual time."""

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


def test_take_for_completes_when_time_is_up() -> None:
    async def main() -> None:
        tp = TestPublisher[str].create()
        await expect_marbles(cold("a-b-c-d|").take_for(3.5), "a-b-|")
        ts = TestSubscriber[str](initial_request=5)
        Flux.from_publisher(tp).take_for(1.0).subscribe(ts)
        await ts.wait_terminated()
        ts.assert_complete()
        tp.assert_cancelled()

    run_virtual(main)


def test_take_for_passes_demand_errors_and_cancel() -> None:
    async def main() -> None:
        await (
            StepVerifier.create(Flux.range(0, 5).take_for(10), initial_request=0)
            .expect_no_event(1)
            .then_request(2)
            .expect_next(0, 1)
            .then_request(0)
            .expect_error(ValueError, match="3.9")
            .verify()
        )
        failure = OSError("down")
        await expect_marbles(cold("a#", error=failure).take_for(5), "a#", error=failure)
        ts = TestSubscriber[int](initial_request=5)
        Flux.never().take_for(1.0).subscribe(ts)
        ts.cancel()
        await asyncio.sleep(2)
        ts.assert_not_terminated()

    run_virtual(main)


def test_skip_for_drops_the_first_period_and_re_requests() -> None:
    async def main() -> None:
        await expect_marbles(cold("a-b-c-d|").skip_for(3.5), "----c-d|")
        tp = TestPublisher[int].create()
        await (
            StepVerifier.create(Flux.from_publisher(tp).skip_for(1.0), initial_request=1)
            .then(lambda: tp.next(1))
            .expect_no_event(2)
            .then(lambda: tp.next(2))
            .expect_next(2)
            .then_cancel()
            .verify()
        )
        assert tp.requests == [1, 1]
        tp.assert_cancelled()

    run_virtual(main)


def test_skip_for_passes_errors_and_bad_requests() -> None:
    async def main() -> None:
        failure = OSError("down")
        await expect_marbles(cold("a#", error=failure).skip_for(5), "-#", error=failure)
        await (
            StepVerifier.create(Flux.range(0, 5).skip_for(1), initial_request=0)
            .then_request(0)
            .expect_error(ValueError, match="3.9")
            .verify()
        )

    run_virtual(main)


def test_negative_durations_rejected() -> None:
    with pytest.raises(ValueError, match="take_for"):
        Flux.never().take_for(-1)
    with pytest.raises(ValueError, match="skip_for"):
        Flux.never().skip_for(-1)


def test_pipe_forms_of_the_time_operators_agree() -> None:
    from reactive_aio import pipe

    async def main() -> None:
        source = cold("ab-c--d|")
        await expect_marbles(source | pipe.take_for(2.2), "ab|")
        await expect_marbles(source | pipe.skip_for(2.2), "---c--d|")
        await expect_marbles(source | pipe.delay(1.0), "-ab-c--d|")
        await expect_marbles(source | pipe.debounce(1.2), "--b-c--(d|)")
        await expect_marbles(source | pipe.throttle_first(2.0), "a--c--d|")
        assert await (source | pipe.sample(10.0)).to_list() == ["d"]
        assert await (source | pipe.throttle_last(10.0)).to_list() == ["d"]
        assert await (source | pipe.delay_elements(1.0)).to_list() == ["a", "b", "c", "d"]
        assert await (source | pipe.delay_subscription(1.0)).to_list() == ["a", "b", "c", "d"]
        assert await (source | pipe.timeout(5.0)).to_list() == ["a", "b", "c", "d"]
        assert await (source | pipe.retry_backoff(1, first_backoff=1, max_backoff=1)).to_list() == [
            "a",
            "b",
            "c",
            "d",
        ]
        assert await (source | pipe.buffer_timeout(2, 5.0)).to_list() == [["a", "b"], ["c", "d"]]

    run_virtual(main)
