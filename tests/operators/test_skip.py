"""skip: drop the first n items."""

from __future__ import annotations

import pytest

from reactive_aio import MAX_DEMAND, Flux
from reactive_aio.testing import TestSubscriber

from ._transform_support import Probe


def test_skip_raises_first_request_by_count() -> None:
    probe = Probe(10)
    ts = TestSubscriber[int]()
    Flux.from_publisher(probe).skip(3).subscribe(ts)
    assert probe.requests == []
    ts.request(1)
    ts.assert_values(3).assert_not_terminated()
    ts.request(2)
    ts.assert_values(3, 4, 5)
    assert probe.requests == [4, 2]


def test_skip_saturates_unbounded_demand() -> None:
    probe = Probe(5)
    ts = TestSubscriber[int](initial_request=MAX_DEMAND)
    Flux.from_publisher(probe).skip(2).subscribe(ts)
    ts.assert_values(2, 3, 4).assert_complete()
    assert probe.requests == [MAX_DEMAND]


def test_skip_cancel_and_upstream_error() -> None:
    probe = Probe(10)
    ts = TestSubscriber[int](initial_request=1)
    Flux.from_publisher(probe).skip(1).subscribe(ts)
    ts.cancel()
    assert probe.cancels == 1
    failed = TestSubscriber[int](initial_request=5)
    Flux.from_publisher(Probe(3, OSError("x"))).skip(1).subscribe(failed)
    failed.assert_values(1, 2).assert_error(OSError)


def test_skip_rejects_negative_and_bad_request() -> None:
    with pytest.raises(ValueError, match=">= 0"):
        Flux.range(0, 1).skip(-1)
    ts = TestSubscriber[int]()
    Flux.range(0, 5).skip(1).subscribe(ts)
    ts.request(0)
    ts.assert_error(ValueError, match="rule 3.9")
