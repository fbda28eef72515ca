"""retry_when and the Retry spec. ``test_reactor_*`` cases are ported from reactor-core's
``FluxRetryWhenTest``."""

from __future__ import annotations

import pytest

from reactive_aio import Flux, Retry
from reactive_aio.testing import TestSubscriber

from ._transform_support import Probe, assert_cold_repeater_backpressured


def _just_error() -> Flux[int]:
    return Flux.just(1).concat_with(Flux.error(RuntimeError("forced failure 0")))


def _range_error() -> Flux[int]:
    return Flux.range(1, 2).concat_with(Flux.error(RuntimeError("forced failure 0")))


async def test_reactor_cold_repeater() -> None:
    ts = TestSubscriber[int](initial_request=100)
    _just_error().retry_when(lambda errors: Flux.range(1, 10)).subscribe(ts)
    ts.assert_values(*[1] * 11).assert_complete()


async def test_reactor_cold_repeater_backpressured() -> None:
    assert_cold_repeater_backpressured(_range_error().retry_when(lambda errors: Flux.range(1, 5)))


async def test_reactor_cold_empty() -> None:
    ts = TestSubscriber[int](initial_request=10)
    _range_error().retry_when(lambda errors: Flux.empty()).subscribe(ts)
    ts.assert_no_values().assert_complete()


async def test_reactor_cold_error() -> None:
    ts = TestSubscriber[int](initial_request=10)
    _range_error().retry_when(lambda errors: Flux.error(OSError("forced failure 2"))).subscribe(ts)
    ts.assert_no_values().assert_error(OSError, match="forced failure 2")


async def test_reactor_when_factory_throws() -> None:
    def companion(errors: Flux[BaseException]) -> Flux[object]:
        raise ValueError("forced failure")

    ts = TestSubscriber[int](initial_request=10)
    _range_error().retry_when(companion).subscribe(ts)
    ts.assert_no_values().assert_error(ValueError)


async def test_reactor_retry_when_context_trigger_cancels_source_and_completes() -> None:
    # a companion taking one error: one retry, then its completion ends the stream
    ts = TestSubscriber[int](initial_request=10)
    _just_error().retry_when(lambda errors: errors.take(1)).subscribe(ts)
    ts.assert_values(1, 1).assert_complete()


async def test_the_companion_sees_the_errors() -> None:
    seen: list[str] = []
    ts = TestSubscriber[int](initial_request=10)
    source = _just_error().retry_when(
        lambda errors: errors.do_on_next(lambda e: seen.append(str(e))).take(2)
    )
    source.subscribe(ts)
    # two retries; take(2) is complete, so the third round's error completes the stream
    ts.assert_values(1, 1, 1).assert_complete()
    assert seen == ["forced failure 0"] * 2


async def test_retry_max() -> None:
    probe = Probe(2, OSError("x"))
    ts = TestSubscriber[int](initial_request=100)
    Flux.from_publisher(probe).retry_when(Retry.max(2)).subscribe(ts)
    ts.assert_values(0, 1, 0, 1, 0, 1).assert_error(OSError)
    assert "gave up after 2 retries" in "".join(getattr(ts.errors[0], "__notes__", []))
    assert probe.subscribes == 3


async def test_retry_max_when_selects_errors() -> None:
    ts = TestSubscriber[int](initial_request=100)
    _just_error().retry_when(Retry.max(5, when=OSError)).subscribe(ts)
    ts.assert_values(1).assert_error(RuntimeError)


async def test_retry_backoff_waits_between_attempts() -> None:
    ts = TestSubscriber[int](initial_request=100)
    _just_error().retry_when(Retry.backoff(2, 0.005, max_backoff=0.01, jitter=0.0)).subscribe(ts)
    ts.assert_values(1)  # the first retry waits
    await ts.wait_terminated()
    ts.assert_values(1, 1, 1).assert_error(RuntimeError)


async def test_demand_is_carried_across_retries() -> None:
    probe = Probe(3, OSError("x"))
    ts = TestSubscriber[int](initial_request=4)
    Flux.from_publisher(probe).retry_when(Retry.max(1)).subscribe(ts)
    ts.assert_values(0, 1, 2, 0)
    assert probe.requests == [4, 1]


async def test_cancel_cancels_the_source_and_the_companion() -> None:
    cancelled: list[str] = []
    ts = TestSubscriber[int](initial_request=1)
    source = Flux.just(1).concat_with(Flux.never()).do_on_cancel(lambda: cancelled.append("src"))
    source.retry_when(
        lambda errors: Flux.never().do_on_cancel(lambda: cancelled.append("companion"))
    ).subscribe(ts)
    ts.cancel()
    assert sorted(cancelled) == ["companion", "src"]


def test_retry_spec_checks_its_arguments() -> None:
    with pytest.raises(ValueError, match="max_attempts"):
        Retry.max(-1)
    with pytest.raises(ValueError, match="first_backoff <= max_backoff"):
        Retry.backoff(1, 2.0, max_backoff=1.0)
    with pytest.raises(ValueError, match="jitter"):
        Retry.backoff(1, 1.0, jitter=2.0)
