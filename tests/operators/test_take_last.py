"""take_last: the last n items after completion, within demand."""

from __future__ import annotations

from reactive_aio import MAX_DEMAND, Flux
from reactive_aio.testing import TestSubscriber

from ._transform_support import Probe


def test_take_last_emits_tail_within_demand() -> None:
    probe = Probe(10)
    ts = TestSubscriber[int]()
    Flux.from_publisher(probe).take_last(3).subscribe(ts)
    assert probe.requests == [MAX_DEMAND]
    ts.assert_no_values().assert_not_terminated()
    ts.request(1)
    ts.assert_values(7).assert_not_terminated()
    ts.request(1)
    ts.assert_values(7, 8)
    ts.request(1)
    ts.assert_values(7, 8, 9).assert_complete()


def test_take_last_demand_before_completion_and_short_stream() -> None:
    ts = TestSubscriber[int](initial_request=5)
    Flux.range(0, 2).take_last(3).subscribe(ts)
    ts.assert_values(0, 1).assert_complete()
    zero = TestSubscriber[int]()
    Flux.range(0, 2).take_last(0).subscribe(zero)
    zero.assert_complete()


def test_take_last_cancel_before_and_after_completion() -> None:
    ts = TestSubscriber[int]()
    Flux.never().take_last(2).subscribe(ts)
    ts.cancel()
    ts.assert_not_terminated()
    ts2 = TestSubscriber[int]()
    Flux.range(0, 5).take_last(2).subscribe(ts2)
    ts2.request(1)
    ts2.cancel()
    ts2.request(1)
    ts2.assert_values(3).assert_not_terminated()


def test_take_last_upstream_error_and_bad_request() -> None:
    failed = TestSubscriber[int](initial_request=5)
    Flux.from_publisher(Probe(3, OSError("x"))).take_last(2).subscribe(failed)
    failed.assert_no_values().assert_error(OSError)
    bad = TestSubscriber[int]()
    Flux.range(0, 5).take_last(2).subscribe(bad)
    bad.request(0)
    bad.assert_error(ValueError, match="rule 3.9")
