"""retry_backoff on virtual time: bounded jittered pauses, fresh resubscription, demand."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from reactive_aio import Flux, Publisher
from reactive_aio._operators._retry_when import backoff_delay
from reactive_aio.testing import StepVerifier, TestSubscriber, run_virtual


def _failing(times: int, attempts: list[float]) -> Flux[int]:
    """A source that fails *times* times (after emitting 0), then emits 0, 1 and completes."""

    def make() -> Publisher[int]:
        attempts.append(asyncio.get_running_loop().time())
        if len(attempts) <= times:
            return Flux.just(0).map(lambda _: 1 // 0)
        return Flux.just(0, 1)

    return Flux.defer(make)


def test_pauses_grow_within_bounds() -> None:
    async def main() -> None:
        attempts: list[float] = []
        flux = _failing(4, attempts).retry_backoff(
            5, first_backoff=1.0, max_backoff=5.0, jitter=0.5
        )
        assert await flux.to_list() == [0, 1]
        pauses = [b - a for a, b in itertools.pairwise(attempts)]
        assert len(pauses) == 4
        for n, pause in enumerate(pauses):
            base = min(2.0**n, 5.0)
            assert max(1.0, base * 0.5) - 1e-9 <= pause <= min(5.0, base * 1.5) + 1e-9

    run_virtual(main)


def test_without_jitter_pauses_are_exact() -> None:
    async def main() -> None:
        attempts: list[float] = []
        flux = _failing(4, attempts).retry_backoff(4, first_backoff=1.0, max_backoff=3.0, jitter=0)
        assert await flux.to_list() == [0, 1]
        start = attempts[0]
        assert [a - start for a in attempts] == [0.0, 1.0, 3.0, 6.0, 9.0]

    run_virtual(main)


def test_gives_up_with_the_last_error() -> None:
    async def main() -> None:
        attempts: list[float] = []
        flux = _failing(10, attempts).retry_backoff(2, first_backoff=1.0, max_backoff=1.0)
        ts = await StepVerifier.create(flux).expect_error(ZeroDivisionError).verify()
        assert len(attempts) == 3
        assert "gave up after 2 retries" in "".join(getattr(ts.errors[0], "__notes__", []))

    run_virtual(main)


def test_unserved_demand_carries_over() -> None:
    async def main() -> None:
        attempts: list[float] = []
        flux = _failing(1, attempts).retry_backoff(1, first_backoff=1.0, max_backoff=1.0)
        await (
            StepVerifier.create(flux, initial_request=1)
            .expect_no_event(0.5)  # the failed first attempt used no demand
            .expect_next(0)
            .then_request(1)
            .expect_next(1)
            .expect_complete()
            .verify()
        )

    run_virtual(main)


def test_cancel_during_the_pause_stops_retrying() -> None:
    async def main() -> None:
        attempts: list[float] = []
        ts = TestSubscriber[int](initial_request=1)
        _failing(5, attempts).retry_backoff(5, first_backoff=1.0, max_backoff=1.0).subscribe(ts)
        ts.cancel()
        await asyncio.sleep(10)
        assert len(attempts) == 1
        ts.assert_not_terminated()

    run_virtual(main)


def test_request_zero_is_an_error() -> None:
    async def main() -> None:
        await (
            StepVerifier.create(
                Flux.never().retry_backoff(1, first_backoff=1, max_backoff=1), initial_request=0
            )
            .then_request(0)
            .expect_error(ValueError, match="3.9")
            .verify()
        )

    run_virtual(main)


def test_backoff_delay_clamps() -> None:
    assert backoff_delay(10, 1.0, 8.0, 0.0) == 8.0
    assert backoff_delay(0, 1.0, 8.0, 0.9, uniform=lambda a, b: a) == 1.0
    assert backoff_delay(3, 1.0, 8.0, 0.5, uniform=lambda a, b: b) == 8.0


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="max_attempts"):
        Flux.never().retry_backoff(-1, first_backoff=1, max_backoff=1)
    with pytest.raises(ValueError, match="first_backoff <= max_backoff"):
        Flux.never().retry_backoff(1, first_backoff=2, max_backoff=1)
    with pytest.raises(ValueError, match="jitter"):
        Flux.never().retry_backoff(1, first_backoff=1, max_backoff=1, jitter=2)
