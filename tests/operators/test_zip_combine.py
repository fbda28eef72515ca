"""zip, zip_with, combine_latest, with_latest_from: demand, errors, completion, cancel."""

from __future__ import annotations

from typing import assert_type

from hypothesis import given, settings, strategies as st

from reactive_aio import MAX_DEMAND, Flux, NullSignalError
from reactive_aio.testing import ProtocolChecker, TestSubscriber, checked

from ._probe import Probe


def test_zip_waits_for_demand_and_pairs_in_order() -> None:
    ts = TestSubscriber[tuple[int, str]]()
    Flux.zip(Flux.range(0, 3), Flux.just("a", "b", "c")).subscribe(ts)
    ts.assert_no_values()
    ts.request(1)
    ts.assert_values((0, "a")).assert_not_terminated()
    ts.request(5)
    ts.assert_values((0, "a"), (1, "b"), (2, "c")).assert_complete()


def test_zip_bounds_prefetch_and_replenishes_in_batches() -> None:
    left = Probe(Flux.range(0, 1000))
    right = Probe(Flux.range(0, 1000))
    ts = TestSubscriber[tuple[int, int]]()
    Flux.zip(left, right, prefetch=8).subscribe(ts)
    assert left.requests == [8]
    ts.request(6)
    assert left.requests == [8, 6]
    ts.assert_value_count(6)


def test_zip_completes_when_the_shortest_runs_out_and_cancels_the_rest() -> None:
    longer = Probe(Flux.never())
    ts = TestSubscriber[tuple[int, int]](initial_request=5)
    Flux.zip(longer, Flux.empty()).subscribe(ts)
    ts.assert_complete()
    assert longer.cancels == 1


def test_zip_error_cancels_the_others() -> None:
    other = Probe(Flux.never())
    ts = TestSubscriber[tuple[int, int]](initial_request=5)
    Flux.zip(other, Flux.error(OSError("down"))).subscribe(ts)
    ts.assert_error(OSError, match="down")
    assert other.cancels == 1


def test_zip_cancel_and_no_sources() -> None:
    sources = [Probe(Flux.never()) for _ in range(2)]
    ts = TestSubscriber[tuple[int, int]](initial_request=5)
    Flux.zip(*sources).subscribe(ts)
    ts.cancel()
    assert [p.cancels for p in sources] == [1, 1]
    ts2 = TestSubscriber[tuple[object, ...]](initial_request=5)
    Flux.zip().subscribe(ts2)
    ts2.assert_no_values().assert_complete()


def test_zip_with() -> None:
    ts = TestSubscriber[tuple[int, int]](initial_request=10)
    Flux.range(0, 2).zip_with(Flux.range(5, 5)).subscribe(ts)
    ts.assert_values((0, 5), (1, 6)).assert_complete()


def test_combine_latest_waits_for_every_source_then_combines_on_each_item() -> None:
    ts = TestSubscriber[tuple[int, str]]()
    Flux.combine_latest(Flux.range(0, 3), Flux.just("a", "b")).subscribe(ts)
    ts.assert_no_values()
    ts.request(1)
    ts.assert_values((2, "a"))
    ts.request(MAX_DEMAND)
    ts.assert_values((2, "a"), (2, "b")).assert_complete()


def test_combine_latest_source_empty_completes_and_cancels() -> None:
    other = Probe(Flux.never())
    ts = TestSubscriber[tuple[int, int]](initial_request=1)
    Flux.combine_latest(other, Flux.empty()).subscribe(ts)
    ts.assert_complete()
    assert other.cancels == 1


def test_combine_latest_error_and_cancel() -> None:
    other = Probe(Flux.never())
    ts = TestSubscriber[tuple[int, int]](initial_request=1)
    Flux.combine_latest(other, Flux.error(OSError("down"))).subscribe(ts)
    ts.assert_error(OSError, match="down")
    assert other.cancels == 1
    sources = [Probe(Flux.never()) for _ in range(2)]
    ts2 = TestSubscriber[tuple[int, int]](initial_request=1)
    Flux.combine_latest(*sources).subscribe(ts2)
    ts2.cancel()
    assert [p.cancels for p in sources] == [1, 1]


def test_with_latest_from_drops_items_before_other_has_one() -> None:
    main = Probe(Flux.range(0, 5))
    ts = TestSubscriber[tuple[int, str]]()
    Flux(main).with_latest_from(Flux.never()).subscribe(ts)
    ts.request(2)
    ts.assert_no_values()
    assert main.requests == [2, 1, 1, 1, 1, 1]  # every dropped item was asked for again


def test_with_latest_from_demand_passes_through() -> None:
    ts = TestSubscriber[tuple[int, str]]()
    Flux.range(0, 3).with_latest_from(Flux.just("x")).subscribe(ts)
    ts.assert_no_values()
    ts.request(1)
    ts.assert_values((0, "x"))
    ts.request(5)
    ts.assert_values((0, "x"), (1, "x"), (2, "x")).assert_complete()


def test_with_latest_from_other_error_cancels_main() -> None:
    main = Probe(Flux.never())
    ts = TestSubscriber[tuple[int, int]](initial_request=1)
    Flux(main).with_latest_from(Flux.error(OSError("other"))).subscribe(ts)
    ts.assert_error(OSError, match="other")
    assert main.cancels == 1


def test_with_latest_from_empty_other_completes() -> None:
    main = Probe(Flux.never())
    ts = TestSubscriber[tuple[int, int]](initial_request=1)
    Flux(main).with_latest_from(Flux.empty()).subscribe(ts)
    ts.assert_complete()
    assert main.cancels == 1


def test_with_latest_from_main_error_and_cancel_cancel_other() -> None:
    other = Probe(Flux.never())
    ts = TestSubscriber[tuple[int, int]](initial_request=1)
    Flux.error(OSError("main")).with_latest_from(other).subscribe(ts)
    ts.assert_error(OSError, match="main")
    assert other.cancels == 1
    other2 = Probe(Flux.never())
    ts2 = TestSubscriber[tuple[int, int]](initial_request=1)
    Flux.never().with_latest_from(other2).subscribe(ts2)
    ts2.cancel()
    assert other2.cancels == 1


def test_with_latest_from_other_none_is_an_error() -> None:
    ts = TestSubscriber[tuple[int, int]](initial_request=1)
    Flux.never().with_latest_from(Probe(Flux.just(None))).subscribe(ts)  # type: ignore[arg-type]
    ts.assert_error(NullSignalError, match="rule 2.13")


@settings(max_examples=60, deadline=None)
@given(
    left=st.integers(0, 12),
    right=st.integers(0, 12),
    prefetch=st.integers(1, 5),
    requests=st.lists(st.integers(1, 7), min_size=1, max_size=8),
)
def test_zip_any_demand_schedule_gets_exactly_the_pairs(
    left: int, right: int, prefetch: int, requests: list[int]
) -> None:
    checker = ProtocolChecker(report=False)
    a = checked(Flux.range(0, left), checker=checker)
    b = checked(Flux.range(100, right), checker=checker)
    expected = [(i, 100 + i) for i in range(min(left, right))]
    ts = TestSubscriber[tuple[int, int]]()
    checked(Flux.zip(a, b, prefetch=prefetch), checker=checker).subscribe(ts)
    asked = 0
    for n in requests:
        ts.request(n)
        asked += n
        assert len(ts.values) == min(asked, len(expected))
    ts.request(MAX_DEMAND)
    ts.assert_values(*expected).assert_complete().assert_max_depth(1)
    checker.assert_clean()


@settings(max_examples=60, deadline=None)
@given(
    left=st.integers(0, 8),
    right=st.integers(0, 8),
    prefetch=st.integers(1, 5),
    requests=st.lists(st.integers(1, 5), min_size=1, max_size=8),
)
def test_combine_latest_never_exceeds_demand(
    left: int, right: int, prefetch: int, requests: list[int]
) -> None:
    checker = ProtocolChecker(report=False)
    a = checked(Flux.range(0, left), checker=checker)
    b = checked(Flux.range(100, right), checker=checker)
    ts = TestSubscriber[tuple[int, int]]()
    checked(Flux.combine_latest(a, b, prefetch=prefetch), checker=checker).subscribe(ts)
    asked = 0
    for n in requests:
        ts.request(n)
        asked += n
        assert len(ts.values) <= asked
    ts.request(MAX_DEMAND)
    ts.assert_complete().assert_max_depth(1)
    if left and right:
        assert ts.values[-1] == (left - 1, 100 + right - 1)
        assert 1 <= len(ts.values) <= left + right - 1  # at most one per item after the first pair
    else:
        ts.assert_no_values()
    checker.assert_clean()


def test_combining_keeps_element_types() -> None:
    ints, strs = Flux.range(0, 1), Flux.just("a")
    assert_type(Flux.zip(ints, strs), Flux[tuple[int, str]])
    assert_type(Flux.zip(ints, strs, ints), Flux[tuple[int, str, int]])
    assert_type(ints.zip_with(strs), Flux[tuple[int, str]])
    assert_type(Flux.combine_latest(ints, strs), Flux[tuple[int, str]])
    assert_type(ints.with_latest_from(strs), Flux[tuple[int, str]])
    assert_type(ints.merge_with(strs), Flux[int | str])
    assert_type(Flux.race(ints, ints), Flux[int])
    assert_type(ints.flat_map(lambda x: Flux.just(str(x))), Flux[str])
