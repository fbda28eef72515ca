"""pairwise: (previous, current)."""

from __future__ import annotations

from reactive_aio import Flux
from reactive_aio.testing import TestSubscriber

from ._transform_support import Probe


def test_pairwise_on_demand() -> None:
    probe = Probe(4)
    ts = TestSubscriber[tuple[int, int]]()
    Flux.from_publisher(probe).pairwise().subscribe(ts)
    ts.request(1)
    ts.assert_values((0, 1)).assert_not_terminated()
    assert probe.requests == [1, 1]
    ts.request(5)
    ts.assert_values((0, 1), (1, 2), (2, 3)).assert_complete()


def test_pairwise_cancel_and_upstream_error() -> None:
    probe = Probe(10)
    ts = TestSubscriber[tuple[int, int]](initial_request=1)
    Flux.from_publisher(probe).pairwise().subscribe(ts)
    ts.cancel()
    assert probe.cancels == 1
    failed = TestSubscriber[tuple[int, int]](initial_request=5)
    Flux.from_publisher(Probe(2, OSError("x"))).pairwise().subscribe(failed)
    failed.assert_values((0, 1)).assert_error(OSError)
