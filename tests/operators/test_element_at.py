"""element_at: one item by position."""

from __future__ import annotations

import pytest

from reactive_aio import Flux
from reactive_aio.testing import TestSubscriber

from ._transform_support import Probe


def test_element_at_asks_exactly_index_plus_one_and_cancels() -> None:
    probe = Probe(10)
    ts = TestSubscriber[int]()
    Flux.from_publisher(probe).element_at(3).subscribe(ts)
    assert probe.requests == []
    ts.request(1)
    ts.assert_values(3).assert_complete()
    assert probe.requests == [4]
    assert probe.cancels == 1


def test_element_at_short_stream_default_or_index_error() -> None:
    ts = TestSubscriber[int](initial_request=1)
    Flux.range(0, 2).element_at(5, 99).subscribe(ts)
    ts.assert_values(99).assert_complete()
    bad = TestSubscriber[int](initial_request=1)
    Flux.range(0, 2).element_at(5).subscribe(bad)
    bad.assert_error(IndexError, match="after 2 items")
    with pytest.raises(ValueError, match=">= 0"):
        Flux.range(0, 2).element_at(-1)


def test_element_at_cancel_and_upstream_error() -> None:
    probe = Probe(10)
    ts = TestSubscriber[int]()  # no demand yet: the stream is still running when it cancels
    Flux.from_publisher(probe).element_at(100).subscribe(ts)
    ts.cancel()
    assert probe.cancels == 1
    failed = TestSubscriber[int](initial_request=1)
    Flux.from_publisher(Probe(2, OSError("x"))).element_at(5, 1).subscribe(failed)
    failed.assert_no_values().assert_error(OSError)
