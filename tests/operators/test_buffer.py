"""buffer: lists of count items every skip items."""

from __future__ import annotations

import pytest

from reactive_aio import Flux
from reactive_aio.testing import TestSubscriber

from ._transform_support import Probe


def test_buffer_exact_requests_count_per_list() -> None:
    probe = Probe(7)
    ts = TestSubscriber[list[int]]()
    Flux.from_publisher(probe).buffer(3).subscribe(ts)
    ts.request(1)
    ts.assert_values([0, 1, 2]).assert_not_terminated()
    assert probe.requests == [3]
    ts.request(5)
    ts.assert_values([0, 1, 2], [3, 4, 5], [6]).assert_complete()


def test_buffer_with_gaps_and_overlap() -> None:
    gaps = TestSubscriber[list[int]](initial_request=10)
    Flux.range(0, 8).buffer(2, 3).subscribe(gaps)
    gaps.assert_values([0, 1], [3, 4], [6, 7]).assert_complete()
    overlap = TestSubscriber[list[int]]()
    Flux.range(0, 5).buffer(3, 1).subscribe(overlap)
    overlap.request(1)
    overlap.assert_values([0, 1, 2])
    overlap.request(2)
    overlap.assert_values([0, 1, 2], [1, 2, 3], [2, 3, 4]).assert_not_terminated()
    overlap.request(1)
    overlap.assert_values([0, 1, 2], [1, 2, 3], [2, 3, 4], [3, 4]).assert_not_terminated()
    overlap.request(5)
    overlap.assert_value_count(5).assert_complete()


def test_buffer_cancel_error_and_bad_arguments() -> None:
    probe = Probe(10)
    ts = TestSubscriber[list[int]](initial_request=1)
    Flux.from_publisher(probe).buffer(2).subscribe(ts)
    ts.cancel()
    assert probe.cancels == 1
    failed = TestSubscriber[list[int]](initial_request=5)
    Flux.from_publisher(Probe(3, OSError("x"))).buffer(2).subscribe(failed)
    failed.assert_values([0, 1]).assert_error(OSError)
    with pytest.raises(ValueError, match="> 0"):
        Flux.range(0, 1).buffer(0)


async def test_buffer_with_gaps_asks_only_the_items_its_lists_need() -> None:
    """Deliberate choice (as Reactor): ``buffer(2, 3)`` asks 5 items for 2 lists, not 6; the
    gap after the last list is asked for with the next request."""
    probe = Probe(20)
    ts = TestSubscriber[list[int]]()
    Flux.from_publisher(probe).buffer(2, 3).subscribe(ts)
    ts.request(2)
    assert probe.requests == [5]
    ts.assert_values([0, 1], [3, 4])
    ts.request(1)
    assert probe.requests == [5, 3]
    ts.assert_values([0, 1], [3, 4], [6, 7])


async def test_buffer_first_request_counts_overlaps_and_plain_lists_alike() -> None:
    for count, skip, expected in ((3, 1, [4, 1]), (2, 2, [4, 2])):
        probe = Probe(20)
        ts = TestSubscriber[list[int]]()
        Flux.from_publisher(probe).buffer(count, skip).subscribe(ts)
        ts.request(2)
        ts.request(1)
        assert probe.requests == expected
