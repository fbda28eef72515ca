"""start_with: prefix items, then the source with the demand left over."""

from __future__ import annotations

from reactive_aio import Flux
from reactive_aio.testing import TestSubscriber

from ._transform_support import Probe


def test_start_with_subscribes_source_after_prefix_with_leftover_demand() -> None:
    probe = Probe(5)
    ts = TestSubscriber[int]()
    Flux.from_publisher(probe).start_with(-3, -2, -1).subscribe(ts)
    assert probe.subscribes == 0
    ts.request(1)
    ts.assert_values(-3)
    assert probe.subscribes == 0
    ts.request(4)
    ts.assert_values(-3, -2, -1, 0, 1).assert_not_terminated()
    assert probe.requests == [2]
    ts.request(10)
    ts.assert_value_count(8).assert_complete()
    ts.assert_max_depth(1)


def test_start_with_cancel_in_prefix_and_in_source() -> None:
    probe = Probe(5)
    ts = TestSubscriber[int](initial_request=1)
    Flux.from_publisher(probe).start_with(8, 9).subscribe(ts)
    ts.cancel()
    ts.assert_values(8)
    assert probe.subscribes == 0
    ts2 = TestSubscriber[int](initial_request=2)
    Flux.from_publisher(probe).start_with(9).subscribe(ts2)
    ts2.cancel()
    ts2.assert_values(9, 0)
    assert probe.cancels == 1


def test_start_with_upstream_error_and_bad_request() -> None:
    ts = TestSubscriber[int](initial_request=5)
    Flux.from_publisher(Probe(1, OSError("x"))).start_with(9).subscribe(ts)
    ts.assert_values(9, 0).assert_error(OSError)
    bad = TestSubscriber[int]()
    Flux.range(0, 2).start_with(9).subscribe(bad)
    bad.request(0)
    bad.assert_error(ValueError, match="rule 3.9")
