"""window(boundary): windows cut by another publisher's items. ``test_reactor_*`` cases are
ported from reactor-core's ``FluxWindowBoundaryTest``."""

from __future__ import annotations

from reactive_aio import Flux, MissingBackpressureError
from reactive_aio.testing import TestPublisher, TestSubscriber


def _driven() -> tuple[TestPublisher[int], TestPublisher[int], TestSubscriber[Flux[int]]]:
    source = TestPublisher[int].create()
    boundary = TestPublisher[int].create()
    outer = TestSubscriber[Flux[int]](initial_request=100)
    Flux.from_publisher(source).window(boundary).subscribe(outer)
    return source, boundary, outer


def _items(window: Flux[int]) -> TestSubscriber[int]:
    ts = TestSubscriber[int](initial_request=100)
    window.subscribe(ts)
    return ts


def _two_windows(*, boundary_ends: bool) -> None:
    source, boundary, outer = _driven()
    outer.assert_value_count(1)  # the first window opens at once
    source.next(1, 2, 3)
    boundary.next(1)
    source.next(4, 5)
    (boundary if boundary_ends else source).complete()
    outer.assert_value_count(2).assert_complete()
    _items(outer.values[0]).assert_values(1, 2, 3).assert_complete()
    _items(outer.values[1]).assert_values(4, 5).assert_complete()
    (source if boundary_ends else boundary).assert_cancelled()


async def test_reactor_normal() -> None:
    _two_windows(boundary_ends=False)


async def test_reactor_normal_other_completes() -> None:
    _two_windows(boundary_ends=True)


async def test_reactor_main_error() -> None:
    source, boundary, outer = _driven()
    first = _items(outer.values[0])
    source.next(1, 2)
    source.error(RuntimeError("forced failure"))
    first.assert_values(1, 2).assert_error(RuntimeError)
    outer.assert_error(RuntimeError)
    assert boundary.cancelled


async def test_reactor_other_error() -> None:
    source, boundary, outer = _driven()
    first = _items(outer.values[0])
    source.next(1)
    boundary.error(RuntimeError("forced failure"))
    first.assert_values(1).assert_error(RuntimeError)
    outer.assert_error(RuntimeError)
    assert source.cancelled


async def test_outer_cancel_keeps_the_open_window_until_the_next_boundary() -> None:
    source, boundary, outer = _driven()
    first = _items(outer.values[0])
    outer.cancel()
    source.next(1)
    source.assert_not_cancelled()
    boundary.next(0)  # closes the window; no new one: both go
    first.assert_values(1).assert_complete()
    source.assert_cancelled()
    boundary.assert_cancelled()
    outer.assert_value_count(1)


async def test_windows_by_a_timer() -> None:
    source = Flux.just(1, 2).concat_with(Flux.never())
    windows = source.window(Flux.timer(0.01)).concat_map(lambda w: w.buffer(10))
    assert await windows.to_list() == [[1, 2]]


async def test_too_many_held_windows_fail_the_stream_and_cancel_both() -> None:
    source, boundary, outer = _driven()
    first = _items(outer.values[0])
    outer.request(1)  # 101 windows asked in all; the boundary opens 300 more
    for i in range(400):
        boundary.next(i)
    outer.assert_error(MissingBackpressureError, match="window")
    first.assert_complete()
    source.assert_cancelled()
    boundary.assert_cancelled()
