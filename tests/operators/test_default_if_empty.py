"""default_if_empty: a value for an empty stream."""

from __future__ import annotations

from reactive_aio import Flux
from reactive_aio.testing import TestSubscriber

from ._transform_support import Probe


def test_default_if_empty_waits_for_demand() -> None:
    ts = TestSubscriber[int]()
    Flux.range(0, 0).default_if_empty(7).subscribe(ts)
    ts.assert_no_values().assert_not_terminated()
    ts.request(1)
    ts.assert_values(7).assert_complete()


def test_default_if_empty_passes_items() -> None:
    ts = TestSubscriber[int]()
    Flux.range(0, 2).default_if_empty(7).subscribe(ts)
    ts.request(1)
    ts.assert_values(0).assert_not_terminated()
    ts.request(1)
    ts.assert_values(0, 1).assert_complete()


def test_default_if_empty_cancel_and_upstream_error() -> None:
    probe = Probe(10)
    ts = TestSubscriber[int](initial_request=1)
    Flux.from_publisher(probe).default_if_empty(7).subscribe(ts)
    ts.cancel()
    assert probe.cancels == 1
    failed = TestSubscriber[int](initial_request=1)
    Flux.from_publisher(Probe(0, OSError("x"))).default_if_empty(7).subscribe(failed)
    failed.assert_no_values().assert_error(OSError)
    bad = TestSubscriber[int]()
    Flux.range(0, 0).default_if_empty(7).subscribe(bad)
    bad.request(-1)
    bad.assert_error(ValueError, match="rule 3.9")
