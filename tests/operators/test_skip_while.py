"""skip_while: drop while the predicate holds."""

from __future__ import annotations

from reactive_aio import Flux
from reactive_aio.testing import TestSubscriber

from ._transform_support import Probe


def test_skip_while_replaces_dropped_items() -> None:
    ts = TestSubscriber[int]()
    Flux.range(0, 10).skip_while(lambda x: x < 5).subscribe(ts)
    ts.assert_no_values()
    ts.request(1)
    ts.assert_values(5).assert_not_terminated()
    ts.request(1)
    ts.assert_values(5, 6)


def test_skip_while_tests_only_until_first_failure() -> None:
    ts = TestSubscriber[int](initial_request=10)
    Flux.just(1, 5, 1).skip_while(lambda x: x < 3).subscribe(ts)
    ts.assert_values(5, 1).assert_complete()


def test_skip_while_cancel_raising_and_upstream_error() -> None:
    probe = Probe(10)
    ts = TestSubscriber[int](initial_request=1)
    Flux.from_publisher(probe).skip_while(lambda x: False).subscribe(ts)
    ts.cancel()
    assert probe.cancels == 1
    raising = Probe(10)
    bad = TestSubscriber[int](initial_request=5)
    Flux.from_publisher(raising).skip_while(lambda x: 1 // (x - 2) < 0).subscribe(bad)
    bad.assert_no_values().assert_error(ZeroDivisionError)
    assert raising.cancels == 1
    failed = TestSubscriber[int](initial_request=5)
    Flux.from_publisher(Probe(3, OSError("x"))).skip_while(lambda x: x < 1).subscribe(failed)
    failed.assert_values(1, 2).assert_error(OSError)
