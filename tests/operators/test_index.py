"""index: (position, item) pairs."""

from __future__ import annotations

from reactive_aio import Flux
from reactive_aio.testing import TestSubscriber

from ._transform_support import Probe


def test_index_pairs_on_demand() -> None:
    ts = TestSubscriber[tuple[int, str]]()
    Flux.just("a", "b").index().subscribe(ts)
    ts.assert_no_values()
    ts.request(1)
    ts.assert_values((0, "a")).assert_not_terminated()
    ts.request(1)
    ts.assert_values((0, "a"), (1, "b")).assert_complete()


def test_index_cancel_and_upstream_error() -> None:
    probe = Probe(5)
    ts = TestSubscriber[tuple[int, int]](initial_request=1)
    Flux.from_publisher(probe).index().subscribe(ts)
    ts.cancel()
    assert probe.cancels == 1
    failed = TestSubscriber[tuple[int, int]](initial_request=5)
    Flux.from_publisher(Probe(1, OSError("x"))).index().subscribe(failed)
    failed.assert_values((0, 0)).assert_error(OSError)
