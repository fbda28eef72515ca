"""buffer(boundary): lists cut by another publisher's items. ``test_reactor_*`` cases are
ported from reactor-core's ``FluxBufferBoundaryTest``."""

from __future__ import annotations

from typing import Any, cast

import pytest

from reactive_aio import Flux, MissingBackpressureError
from reactive_aio.testing import TestPublisher, TestSubscriber


def _driven() -> tuple[TestPublisher[int], TestPublisher[str], TestSubscriber[list[int]]]:
    source = TestPublisher[int].create()
    boundary = TestPublisher[str].create()
    ts = TestSubscriber[list[int]](initial_request=100)
    Flux.from_publisher(source).buffer(boundary).subscribe(ts)
    return source, boundary, ts


async def test_reactor_normal() -> None:
    source, boundary, ts = _driven()
    source.next(1, 2)
    ts.assert_no_values()
    boundary.next("cut")
    ts.assert_values([1, 2])
    boundary.next("cut")  # nothing since: no empty list
    ts.assert_values([1, 2])
    source.next(3, 4)
    boundary.complete()
    ts.assert_values([1, 2], [3, 4]).assert_complete()
    assert source.cancelled


async def test_reactor_main_error() -> None:
    source, boundary, ts = _driven()
    source.next(1, 2)
    boundary.next("cut")
    source.next(3)
    source.error(RuntimeError("forced failure"))
    ts.assert_values([1, 2]).assert_error(RuntimeError)
    assert boundary.cancelled


async def test_reactor_other_error() -> None:
    source, boundary, ts = _driven()
    source.next(1)
    boundary.error(RuntimeError("forced failure"))
    ts.assert_no_values().assert_error(RuntimeError)
    assert source.cancelled


async def test_source_completion_emits_the_open_list_and_cancels_the_boundary() -> None:
    source, boundary, ts = _driven()
    source.next(1)
    source.complete()
    ts.assert_values([1]).assert_complete()
    assert boundary.cancelled


async def test_lists_without_demand_are_held_then_overflow() -> None:
    source = TestPublisher[int].create()
    boundary = TestPublisher[int].create()
    ts = TestSubscriber[list[int]](initial_request=1)
    Flux.from_publisher(source).buffer(boundary).subscribe(ts)
    for i in range(300):
        source.next(i)
        boundary.next(i)
    ts.assert_values([0]).assert_error(MissingBackpressureError, match="buffer")
    assert source.cancelled
    assert boundary.cancelled


async def test_buffer_by_an_interval() -> None:
    lists = await Flux.just(1, 2, 3).concat_with(Flux.never()).buffer(Flux.timer(0.01)).to_list()
    assert lists == [[1, 2, 3]]


def test_a_boundary_must_be_a_publisher() -> None:
    with pytest.raises(TypeError):
        Flux.just(1).buffer(cast(Any, "x"))
