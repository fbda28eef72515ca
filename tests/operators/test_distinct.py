"""distinct and distinct_until_changed."""

from __future__ import annotations

import asyncio

from reactive_aio import Flux
from reactive_aio.testing import TestSubscriber

from ._transform_support import Probe


def test_distinct_drops_seen_items_and_replaces_them() -> None:
    ts = TestSubscriber[int]()
    Flux.just(1, 1, 2, 1, 3, 2).distinct().subscribe(ts)
    ts.assert_no_values()
    ts.request(2)
    ts.assert_values(1, 2).assert_not_terminated()
    ts.request(5)
    ts.assert_values(1, 2, 3).assert_complete()


def test_distinct_by_key() -> None:
    ts = TestSubscriber[str](initial_request=10)
    Flux.just("a", "B", "A", "b", "c").distinct(str.lower).subscribe(ts)
    ts.assert_values("a", "B", "c").assert_complete()


def test_distinct_cancel_raising_key_and_upstream_error() -> None:
    probe = Probe(10)
    ts = TestSubscriber[int](initial_request=1)
    Flux.from_publisher(probe).distinct().subscribe(ts)
    ts.cancel()
    assert probe.cancels == 1
    bad = TestSubscriber[int](initial_request=5)
    raising = Probe(10)
    Flux.from_publisher(raising).distinct(lambda x: 1 // (x - 1)).subscribe(bad)
    bad.assert_values(0).assert_error(ZeroDivisionError)
    assert raising.cancels == 1
    failed = TestSubscriber[int](initial_request=5)
    Flux.from_publisher(Probe(2, OSError("x"))).distinct().subscribe(failed)
    failed.assert_values(0, 1).assert_error(OSError)


def test_distinct_until_changed() -> None:
    ts = TestSubscriber[int]()
    Flux.just(1, 1, 2, 2, 1, 3, 3).distinct_until_changed().subscribe(ts)
    ts.request(3)
    ts.assert_values(1, 2, 1).assert_not_terminated()
    ts.request(3)
    ts.assert_values(1, 2, 1, 3).assert_complete()


def test_distinct_until_changed_by_key_raising_and_errors() -> None:
    ts = TestSubscriber[str](initial_request=10)
    Flux.just("a", "A", "b").distinct_until_changed(str.lower).subscribe(ts)
    ts.assert_values("a", "b").assert_complete()
    probe = Probe(10)
    bad = TestSubscriber[int](initial_request=10)
    Flux.from_publisher(probe).distinct_until_changed(lambda x: x + 1 // (x - 2)).subscribe(bad)
    bad.assert_values(0, 1).assert_error(ZeroDivisionError)
    assert probe.cancels == 1
    failed = TestSubscriber[int](initial_request=5)
    Flux.from_publisher(Probe(2, OSError("x"))).distinct_until_changed().subscribe(failed)
    failed.assert_values(0, 1).assert_error(OSError)
    cancelled = Probe(10)
    ts2 = TestSubscriber[int](initial_request=1)
    Flux.from_publisher(cancelled).distinct_until_changed().subscribe(ts2)
    ts2.cancel()
    assert cancelled.cancels == 1


async def test_distinct_request_from_another_thread() -> None:
    ts = TestSubscriber[int]()
    Flux.just(1, 1, 2, 3).distinct().subscribe(ts)
    await asyncio.to_thread(ts.request, 2)
    await ts.wait_for_values(2)
    ts.assert_values(1, 2).assert_not_terminated()
    assert len(ts.threads) == 1  # every signal on the loop's thread


async def test_rxpy_distinct_until_changed_comparer_all_equal() -> None:
    """RxPY's ``test_distinctuntilchanged.py``: a comparer saying "equal" keeps the first only."""
    assert await Flux.just(2, 3, 4, 5).distinct_until_changed(
        comparer=lambda a, b: True
    ).to_list() == [2]


async def test_rxpy_distinct_until_changed_comparer_all_different() -> None:
    values = (
        await Flux.just(2, 2, 2, 2).distinct_until_changed(comparer=lambda a, b: False).to_list()
    )
    assert values == [2, 2, 2, 2]


async def test_distinct_until_changed_key_and_comparer() -> None:
    """Reactor's ``distinctUntilChanged(keySelector, keyComparator)``: the comparer sees keys,
    previous first."""
    seen: list[tuple[int, int]] = []

    def close(previous: int, key: int) -> bool:
        seen.append((previous, key))
        return abs(previous - key) <= 1

    words = Flux.just("a", "bb", "ccc", "ccccc", "dddddd")
    # each item's key becomes the one the next is compared with, dropped or not
    assert await words.distinct_until_changed(len, comparer=close).to_list() == ["a", "ccccc"]
    assert seen == [(1, 2), (2, 3), (3, 5), (5, 6)]


async def test_distinct_until_changed_raising_comparer_cancels_and_fails() -> None:
    probe = Probe(5)
    ts = TestSubscriber[int](initial_request=5)
    Flux.from_publisher(probe).distinct_until_changed(comparer=lambda a, b: 1 // 0).subscribe(ts)
    ts.assert_values(0).assert_error(ZeroDivisionError)
    assert probe.cancels == 1
