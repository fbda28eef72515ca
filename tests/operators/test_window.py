"""window: a Flux of Flux windows, each with its own demand."""

from __future__ import annotations

import pytest

from reactive_aio import Flux, ProtocolViolationError
from reactive_aio.testing import ProtocolChecker, TestPublisher, TestSubscriber, checked

from ._transform_support import Probe


def test_window_outer_demand_asks_count_items_per_window() -> None:
    probe = Probe(7)
    outer = TestSubscriber[Flux[int]]()
    Flux.from_publisher(probe).window(3).subscribe(outer)
    outer.assert_no_values()
    outer.request(1)
    assert probe.requests == [3]
    outer.assert_value_count(1).assert_not_terminated()
    first = TestSubscriber[int]()
    outer.values[0].subscribe(first)
    first.assert_no_values()  # the window has its own demand
    first.request(2)
    first.assert_values(0, 1).assert_not_terminated()
    first.request(5)
    first.assert_values(0, 1, 2).assert_complete()
    outer.request(10)
    outer.assert_value_count(3).assert_complete()
    rest = [TestSubscriber[int](initial_request=10) for _ in range(2)]
    for window, ts in zip(outer.values[1:], rest, strict=True):
        window.subscribe(ts)
    rest[0].assert_values(3, 4, 5).assert_complete()
    rest[1].assert_values(6).assert_complete()


def test_window_accepts_a_single_subscriber() -> None:
    outer = TestSubscriber[Flux[int]](initial_request=1)
    Flux.range(0, 3).window(3).subscribe(outer)
    outer.values[0].subscribe(TestSubscriber[int](initial_request=1))
    second = TestSubscriber[int](initial_request=1)
    outer.values[0].subscribe(second)
    second.assert_error(ProtocolViolationError, match="single subscriber")


def test_window_outer_cancel_keeps_open_window_until_it_is_done() -> None:
    cancels: list[bool] = []
    source = Flux.concat(Flux.range(0, 2), Flux.never()).do_on_cancel(lambda: cancels.append(True))
    outer = TestSubscriber[Flux[int]](initial_request=1)
    source.window(3).subscribe(outer)
    inner = TestSubscriber[int](initial_request=1)
    outer.values[0].subscribe(inner)
    outer.cancel()
    assert cancels == []  # the open window may still receive items
    inner.request(5)
    inner.assert_values(0, 1).assert_not_terminated()
    inner.cancel()
    assert cancels == [True]


def test_window_outer_cancel_after_window_completed_cancels_upstream() -> None:
    probe = Probe(100)
    outer = TestSubscriber[Flux[int]](initial_request=1)
    Flux.from_publisher(probe).window(3).subscribe(outer)
    outer.cancel()
    assert probe.cancels == 1
    inner = TestSubscriber[int](initial_request=5)
    outer.values[0].subscribe(inner)
    inner.assert_values(0, 1, 2).assert_complete()


def test_window_inner_cancel_then_outer_cancel_cancels_upstream() -> None:
    probe = Probe(100)
    outer = TestSubscriber[Flux[int]](initial_request=2)
    Flux.from_publisher(probe).window(5).subscribe(outer)
    inner = TestSubscriber[int](initial_request=1)
    outer.values[0].subscribe(inner)
    inner.cancel()
    outer.cancel()
    assert probe.cancels == 1


def test_window_upstream_error_reaches_window_and_outer() -> None:
    outer = TestSubscriber[Flux[int]](initial_request=5)
    Flux.from_publisher(Probe(4, OSError("x"))).window(3).subscribe(outer)
    outer.assert_value_count(2).assert_error(OSError)
    last = TestSubscriber[int](initial_request=5)
    outer.values[1].subscribe(last)
    last.assert_values(3).assert_error(OSError)
    with pytest.raises(ValueError, match="> 0"):
        Flux.range(0, 1).window(0)


async def test_window_flattened_with_concat_map() -> None:
    windows = await Flux.range(0, 7).window(3).concat_map(lambda w: w.buffer(10)).to_list()
    assert windows == [[0, 1, 2], [3, 4, 5], [6]]


async def test_window_items_arriving_during_the_replay_come_after_the_buffered_ones() -> None:
    source = TestPublisher[int].create()
    outer = TestSubscriber[Flux[int]](initial_request=1)
    Flux.from_publisher(source).window(4).subscribe(outer)
    source.next(0, 1)
    inner = TestSubscriber[int](initial_request=10)
    inner.on_next_callback = lambda item: source.next(2, 3) if item == 0 else None
    outer.values[0].subscribe(inner)
    inner.assert_values(0, 1, 2, 3).assert_complete()


async def test_window_cancelled_while_upstream_fails_does_not_cancel_upstream_inside_on_error() -> (
    None
):
    # The window's subscriber (concat_map) fails the outer stream from inside the window's
    # on_error, which cancels the window operator: upstream is already terminating (rule 2.3).
    checker = ProtocolChecker(report=False)
    source = checked(Flux.concat(Flux.just(0), Flux.error(OSError("x"))), checker=checker)
    ts = TestSubscriber[int](initial_request=5)
    source.window(2).concat_map(lambda window: window.take(2)).subscribe(ts)
    ts.assert_error(OSError)
    checker.assert_clean()


# -- window(count, skip); ``test_reactor_*`` ported from reactor-core's FluxWindowTest --------


def _drained(window: Flux[int]) -> TestSubscriber[int]:
    ts = TestSubscriber[int](initial_request=100)
    window.subscribe(ts)
    return ts


def test_reactor_skip_backpressured() -> None:
    outer = TestSubscriber[Flux[int]]()
    Flux.range(1, 10).window(2, 3).subscribe(outer)
    outer.assert_no_values()
    for expected in ([1, 2], [4, 5], [7, 8]):
        outer.request(1)
        _drained(outer.values[-1]).assert_values(*expected).assert_complete()
        outer.assert_not_terminated()
    outer.request(1)
    _drained(outer.values[-1]).assert_values(10).assert_complete()
    outer.assert_value_count(4).assert_complete()


def test_reactor_overlap_backpressured() -> None:
    outer = TestSubscriber[Flux[int]]()
    Flux.range(1, 10).window(3, 1).subscribe(outer)
    for i in range(10):
        outer.request(1)
        outer.assert_value_count(i + 1)
        assert outer.completions == (1 if i == 9 else 0)
        expected = list(range(i + 1, min(i + 4, 11)))
        _drained(outer.values[i]).assert_values(*expected).assert_complete()


def test_reactor_skip_in_gap_error() -> None:
    source = TestPublisher[int].create()
    outer = TestSubscriber[Flux[int]](initial_request=10)
    Flux.from_publisher(source).window(1, 3).subscribe(outer)
    source.next(1, 2)
    source.error(RuntimeError("forced failure"))
    outer.assert_value_count(1).assert_error(RuntimeError)
    _drained(outer.values[0]).assert_values(1).assert_complete()


def test_reactor_overlap_error() -> None:
    source = TestPublisher[int].create()
    outer = TestSubscriber[Flux[int]](initial_request=10)
    Flux.from_publisher(source).window(2, 1).subscribe(outer)
    source.next(1)
    source.error(RuntimeError("forced failure"))
    outer.assert_value_count(1).assert_error(RuntimeError)
    _drained(outer.values[0]).assert_values(1).assert_error(RuntimeError)


async def test_reactor_window_will_subdivide_an_input_flux_overlap() -> None:
    windows = Flux.just(1, 2, 3, 4, 5, 6, 7, 8).window(3, 2)
    lists = await windows.concat_map(lambda w: w.buffer(10)).to_list()
    assert lists == [[1, 2, 3], [3, 4, 5], [5, 6, 7], [7, 8]]


def test_window_with_gaps_asks_exactly_the_items_its_windows_need() -> None:
    probe = Probe(100)
    outer = TestSubscriber[Flux[int]]()
    Flux.from_publisher(probe).window(2, 3).subscribe(outer)
    outer.request(2)
    outer.request(1)
    assert probe.requests == [5, 3]  # 2 + 1 * 3 for the first two, then 3 for the next


def test_overlapping_windows_opened_before_they_are_requested_are_held() -> None:
    probe = Probe(100)
    outer = TestSubscriber[Flux[int]]()
    Flux.from_publisher(probe).window(3, 1).subscribe(outer)
    outer.request(1)
    assert probe.requests == [3]  # windows at 1 and 2 opened too: held with their items
    outer.assert_value_count(1)
    outer.request(2)
    outer.assert_value_count(3)
    _drained(outer.values[2]).assert_values(2, 3, 4).assert_complete()
    outer.cancel()  # the window held at 5 is dropped; those emitted are complete
    assert probe.cancels == 1
