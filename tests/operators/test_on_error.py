"""on_error_resume, on_error_return, on_error_map."""

from __future__ import annotations

from reactive_aio import Flux
from reactive_aio.testing import TestSubscriber

from ._transform_support import Probe


def test_on_error_resume_carries_outstanding_demand() -> None:
    fallback = Probe(10)
    ts = TestSubscriber[int](initial_request=5)
    Flux.from_publisher(Probe(2, OSError("x"))).on_error_resume(
        lambda e: Flux.from_publisher(fallback)
    ).subscribe(ts)
    ts.assert_values(0, 1, 0, 1, 2).assert_not_terminated()
    assert fallback.requests == [3]
    ts.request(1)
    ts.assert_value_count(6)


def test_on_error_resume_raising_fn_and_fallback_error() -> None:
    ts = TestSubscriber[int](initial_request=5)
    Flux.error(OSError("x")).on_error_resume(lambda e: 1 // 0).subscribe(ts)  # type: ignore[arg-type, return-value]
    ts.assert_error(ZeroDivisionError)
    ts2 = TestSubscriber[int](initial_request=5)
    Flux.error(OSError("x")).on_error_resume(lambda e: Flux.error(KeyError("k"))).subscribe(ts2)
    ts2.assert_error(KeyError)


def test_on_error_resume_cancel_reaches_fallback() -> None:
    fallback = Probe(10)
    ts = TestSubscriber[int](initial_request=1)
    Flux.error(OSError("x")).on_error_resume(lambda e: Flux.from_publisher(fallback)).subscribe(ts)
    ts.cancel()
    assert fallback.cancels == 1


def test_on_error_return_waits_for_demand_and_selects() -> None:
    ts = TestSubscriber[int]()
    Flux.from_publisher(Probe(1, OSError("x"))).on_error_return(-1, when=OSError).subscribe(ts)
    ts.request(1)
    ts.assert_values(0).assert_not_terminated()
    ts.request(1)
    ts.assert_values(0, -1).assert_complete()
    other = TestSubscriber[int](initial_request=5)
    Flux.error(KeyError("k")).on_error_return(-1, when=(OSError, ValueError)).subscribe(other)
    other.assert_error(KeyError)
    by_predicate = TestSubscriber[int](initial_request=5)
    Flux.error(KeyError("k")).on_error_return(-1, when=lambda e: "k" in str(e)).subscribe(
        by_predicate
    )
    by_predicate.assert_values(-1).assert_complete()


def test_on_error_return_raising_predicate_and_cancel() -> None:
    ts = TestSubscriber[int](initial_request=5)
    Flux.error(KeyError("k")).on_error_return(-1, when=lambda e: 1 // 0).subscribe(ts)
    ts.assert_error(ZeroDivisionError)
    probe = Probe(5)
    ts2 = TestSubscriber[int](initial_request=1)
    Flux.from_publisher(probe).on_error_return(-1).subscribe(ts2)
    ts2.cancel()
    assert probe.cancels == 1


def test_on_error_map() -> None:
    ts = TestSubscriber[int](initial_request=5)
    Flux.from_publisher(Probe(1, OSError("x"))).on_error_map(lambda e: KeyError(str(e))).subscribe(
        ts
    )
    ts.assert_values(0).assert_error(KeyError)
    assert isinstance(ts.errors[0].__context__, OSError)
    raising = TestSubscriber[int](initial_request=5)
    Flux.error(OSError("x")).on_error_map(lambda e: 1 // 0).subscribe(raising)  # type: ignore[arg-type, return-value]
    raising.assert_error(ZeroDivisionError)
    probe = Probe(5)
    ts2 = TestSubscriber[int]()
    Flux.from_publisher(probe).on_error_map(lambda e: e).subscribe(ts2)
    ts2.request(1)
    ts2.assert_values(0)
    ts2.cancel()
    assert probe.cancels == 1


class _TestError(Exception):
    pass


async def test_reactor_on_error_resume_error_predicate() -> None:
    """reactor-core's ``FluxOnErrorResumeTest.onErrorResumeErrorPredicate``: by class."""
    resumed = Flux.error(_TestError()).on_error_resume(lambda e: Flux.just(1), when=_TestError)
    assert await resumed.to_list() == [1]


async def test_reactor_on_error_resume_error_predicate_not() -> None:
    ts = TestSubscriber[int](initial_request=1)
    Flux.error(_TestError()).on_error_resume(lambda e: Flux.just(1), when=RuntimeError).subscribe(
        ts
    )
    ts.assert_no_values().assert_error(_TestError)


async def test_reactor_on_error_resume_error_filtered() -> None:
    """reactor-core's ``FluxOnErrorResumeTest.errorFiltered``: by a predicate."""
    failing = Flux.error(RuntimeError("forced failure"))
    resumed = failing.on_error_resume(
        lambda e: Flux.just(2), when=lambda e: str(e) == "forced failure"
    )
    assert await resumed.to_list() == [2]


async def test_on_error_resume_raising_predicate_keeps_the_original_as_context() -> None:
    ts = TestSubscriber[int](initial_request=1)
    original = OSError("x")
    Flux.error(original).on_error_resume(lambda e: Flux.just(1), when=lambda e: 1 // 0).subscribe(
        ts
    )
    ts.assert_error(ZeroDivisionError)
    assert ts.errors[0].__context__ is original
