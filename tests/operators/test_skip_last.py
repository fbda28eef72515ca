"""skip_last: drop the last n items."""

from __future__ import annotations

from reactive_aio import Flux
from reactive_aio.testing import TestSubscriber

from ._transform_support import Probe


def test_skip_last_holds_back_count_items() -> None:
    probe = Probe(5)
    ts = TestSubscriber[int]()
    Flux.from_publisher(probe).skip_last(2).subscribe(ts)
    ts.assert_no_values()
    ts.request(1)
    ts.assert_values(0).assert_not_terminated()
    assert probe.requests == [3]
    ts.request(5)
    ts.assert_values(0, 1, 2).assert_complete()


def test_skip_last_cancel_and_upstream_error() -> None:
    probe = Probe(10)
    ts = TestSubscriber[int](initial_request=1)
    Flux.from_publisher(probe).skip_last(1).subscribe(ts)
    ts.cancel()
    assert probe.cancels == 1
    failed = TestSubscriber[int](initial_request=5)
    Flux.from_publisher(Probe(3, OSError("x"))).skip_last(1).subscribe(failed)
    failed.assert_values(0, 1).assert_error(OSError)
