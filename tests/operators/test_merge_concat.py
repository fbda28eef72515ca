"""merge, merge_with, concat, concat_with: demand, concurrency, errors, cancellation."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from reactive_aio import MAX_DEMAND, Flux
from reactive_aio.testing import TestSubscriber

from ._probe import Probe


def test_merge_waits_for_demand_and_takes_turns() -> None:
    ts = TestSubscriber[int]()
    Flux.merge(Flux.range(0, 100), Flux.range(1000, 100)).subscribe(ts)
    ts.assert_no_values()
    ts.request(1)
    ts.assert_value_count(1)
    ts.request(1)  # each drain pass starts at the next source
    assert any(v >= 1000 for v in ts.values)
    assert any(v < 1000 for v in ts.values)
    ts.request(MAX_DEMAND)
    assert sorted(ts.values) == [*range(100), *range(1000, 1100)]
    ts.assert_complete()


def test_merge_prefetch_bounds_each_source() -> None:
    sources = [Probe(Flux.range(0, 1000)) for _ in range(3)]
    ts = TestSubscriber[int]()
    Flux.merge(*sources, prefetch=16).subscribe(ts)
    assert [p.requests for p in sources] == [[16], [16], [16]]


def test_merge_concurrency_subscribes_lazily() -> None:
    sources = [Probe(Flux.range(10 * i, 2)) for i in range(3)]
    ts = TestSubscriber[int]()
    Flux.merge(*sources, concurrency=1).subscribe(ts)
    assert [p.subscribed for p in sources] == [1, 0, 0]
    ts.request(MAX_DEMAND)
    ts.assert_values(0, 1, 10, 11, 20, 21).assert_complete()


def test_merge_error_cancels_the_others() -> None:
    other = Probe(Flux.never())
    ts = TestSubscriber[int](initial_request=5)
    Flux.merge(other, Flux.error(OSError("down"))).subscribe(ts)
    ts.assert_error(OSError, match="down")
    assert other.cancels == 1


def test_merge_cancel_cancels_every_source() -> None:
    sources = [Probe(Flux.never()) for _ in range(3)]
    ts = TestSubscriber[int](initial_request=5)
    Flux.merge(*sources).subscribe(ts)
    ts.cancel()
    assert [p.cancels for p in sources] == [1, 1, 1]


def test_merge_with_and_empty_merge() -> None:
    ts = TestSubscriber[int](initial_request=10)
    Flux.just(1).merge_with(Flux.just(2)).subscribe(ts)
    assert sorted(ts.values) == [1, 2]
    ts.assert_complete()
    ts2 = TestSubscriber[int]()
    Flux.merge().subscribe(ts2)
    ts2.assert_complete()


def test_merge_rejects_none_sources() -> None:
    with pytest.raises(TypeError, match=r"rule 1\.9"):
        Flux.merge(Flux.just(1), None)  # type: ignore[arg-type]


def test_concat_plays_sources_in_order_and_subscribes_lazily() -> None:
    second = Probe(Flux.range(10, 2))
    ts = TestSubscriber[int]()
    Flux.concat(Flux.range(0, 2), second).subscribe(ts)
    ts.request(2)
    ts.assert_values(0, 1)
    ts.request(1)
    ts.assert_values(0, 1, 10)
    assert second.subscribed == 1
    ts.request(1)
    ts.assert_values(0, 1, 10, 11).assert_complete()


def test_concat_error_stops_before_later_sources() -> None:
    later = Probe(Flux.just(9))
    ts = TestSubscriber[int](initial_request=10)
    Flux.concat(Flux.just(1), Flux.error(OSError("down")), later).subscribe(ts)
    ts.assert_values(1).assert_error(OSError)
    assert later.subscribed == 0


def test_concat_cancel() -> None:
    current = Probe(Flux.never())
    ts = TestSubscriber[int](initial_request=10)
    Flux.concat(current, Flux.just(1)).subscribe(ts)
    ts.cancel()
    assert current.cancels == 1


def test_concat_with() -> None:
    ts = TestSubscriber[int](initial_request=10)
    Flux.range(0, 2).concat_with(Flux.just(7)).subscribe(ts)
    ts.assert_values(0, 1, 7).assert_complete()


def test_concat_rule_3_9() -> None:
    ts = TestSubscriber[int]()
    Flux.concat(Flux.just(1)).subscribe(ts)
    ts.request(0)
    ts.assert_error(ValueError, match="rule 3.9")


async def test_merge_rejects_zero_concurrency_and_what_is_not_a_publisher() -> None:
    with pytest.raises(ValueError, match="concurrency must be > 0, got 0"):
        Flux.merge(Flux.just(1), concurrency=0)
    with pytest.raises(
        TypeError,
        match=r"merge takes publishers, not list \[1, 2\]; .* unpack it: merge\(\*publishers\)",
    ):
        Flux.merge([1, 2])  # type: ignore[arg-type]
    combiners: dict[str, Callable[..., object]] = {
        "concat": Flux.concat,
        "zip": Flux.zip,
        "combine_latest": Flux.combine_latest,
        "race": Flux.race,
    }
    for name, combine in combiners.items():
        with pytest.raises(TypeError, match=rf"^{name} takes publishers, not int 3$"):
            combine(Flux.just(1), 3)


async def test_concat_map_asks_the_outer_source_for_one_item_at_a_time() -> None:
    """Deliberate choice (unlike Reactor's prefetch of 32): the next outer item is requested
    only once the current inner stream completed."""
    outer = Probe(Flux.range(0, 3))
    ts = TestSubscriber[int](initial_request=100)
    Flux.from_publisher(outer).concat_map(lambda x: Flux.just(x, x)).subscribe(ts)
    ts.assert_values(0, 0, 1, 1, 2, 2).assert_complete()
    assert outer.requests == [1, 1, 1, 1]
