"""TestPublisher: emits on command, records demand and cancels, misbehaves on request."""

from __future__ import annotations

import pytest

from reactive_aio import Flux, NonPositiveRequestError, NullSignalError
from reactive_aio.testing import Misbehavior, TestPublisher, TestSubscriber


def test_emits_within_demand_and_records_requests() -> None:
    tp = TestPublisher[int].create()
    ts = TestSubscriber[int](initial_request=2)
    tp.subscribe(ts)
    tp.next(1, 2)
    ts.assert_values(1, 2)
    assert tp.requests == [2]
    ts.request(1)
    tp.emit(3)
    ts.assert_values(1, 2, 3).assert_complete()
    tp.assert_subscribers(1).assert_not_cancelled()


def test_well_behaved_refuses_misuse() -> None:
    tp = TestPublisher[int].create()
    ts = TestSubscriber[int]()
    tp.subscribe(ts)
    with pytest.raises(AssertionError, match="no demand"):
        tp.next(1)
    with pytest.raises(AssertionError, match="None"):
        tp.next(None)
    tp.complete()
    with pytest.raises(AssertionError, match="after termination"):
        tp.complete()


def test_records_cancel() -> None:
    tp = TestPublisher[int].create()
    ts = TestSubscriber[int](initial_request=1)
    Flux.from_publisher(tp).take(1).subscribe(ts)
    tp.next(7)
    ts.assert_values(7).assert_complete()
    tp.assert_cancelled()


def test_request_zero_is_signalled() -> None:
    tp = TestPublisher[int].create()
    ts = TestSubscriber[int]()
    tp.subscribe(ts)
    ts.request(0)
    ts.assert_error(NonPositiveRequestError, match="3.9")


def test_noncompliant_ignores_demand_and_emits_none() -> None:
    tp = TestPublisher[int].create_noncompliant(Misbehavior.IGNORE_DEMAND, Misbehavior.EMIT_NONE)
    values: list[object] = []
    errors: list[BaseException] = []
    Flux.from_publisher(tp).subscribe(on_next=values.append, on_error=errors.append, prefetch=1)
    tp.next(1, 2, 3)
    assert values == [1, 2, 3]
    with pytest.raises(NullSignalError, match=r"2\.13"):  # the subscriber's own defence
        tp.next(None)


def test_noncompliant_signals_twice() -> None:
    tp = TestPublisher[int].create_noncompliant(Misbehavior.AFTER_TERMINATION)
    ts = TestSubscriber[int](initial_request=5)
    tp.subscribe(ts)
    tp.complete().complete()
    assert ts.completions == 2


def test_take_defends_against_emission_after_completion() -> None:
    tp = TestPublisher[int].create_noncompliant(
        Misbehavior.IGNORE_DEMAND, Misbehavior.AFTER_TERMINATION, Misbehavior.IGNORE_CANCEL
    )
    ts = TestSubscriber[int](initial_request=1)
    Flux.from_publisher(tp).take(1).subscribe(ts)
    tp.next(1, 2).complete()
    ts.assert_values(1).assert_complete()


def test_noncompliant_needs_a_violation() -> None:
    with pytest.raises(ValueError, match="Misbehavior"):
        TestPublisher[int].create_noncompliant()
