"""batch: what arrived while downstream was busy, as one list, never waiting for it to fill."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from reactive_aio import Flux, MissingBackpressureError
from reactive_aio.testing import TestSubscriber

from ..manual_publisher import ManualPublisher


async def test_batches_carry_every_item_in_order_across_a_boundary() -> None:
    chunks = [chunk async for chunk in Flux.range(0, 10_000).publish_on().batch(256)]
    assert [x for chunk in chunks for x in chunk] == list(range(10_000))
    assert all(0 < len(chunk) <= 256 for chunk in chunks)
    assert len(chunks) < 10_000 // 16  # items that arrive in the same turn travel together


async def test_a_slow_source_is_not_held_back_to_fill_a_batch() -> None:
    release = asyncio.Event()

    async def slow() -> AsyncIterator[int]:
        yield 1
        await release.wait()
        yield 2

    chunks = Flux.from_async_iterable(slow()).batch(256).iterate(prefetch=1)
    assert await asyncio.wait_for(anext(chunks), 1.0) == [1]
    release.set()
    assert await anext(chunks) == [2]
    await chunks.aclose()


async def test_without_demand_items_gather_up_to_max_items() -> None:
    source = ManualPublisher()
    ts = TestSubscriber[list[int]]()
    Flux.from_publisher(source).batch(4).subscribe(ts)
    assert source.requests == [4]
    source.push(0, 1, 2, 3)
    await asyncio.sleep(0)
    ts.assert_no_values()
    ts.request(1)
    await ts.wait_for_values(1)
    ts.assert_values([0, 1, 2, 3])
    assert source.requests == [4, 4]  # the four that left are asked for again, at once


async def test_an_upstream_error_comes_after_the_held_items() -> None:
    ts = TestSubscriber[list[int]](initial_request=10)
    Flux.range(0, 3).concat_with(Flux.error(ValueError("boom"))).batch(8).subscribe(ts)
    await ts.wait_terminated()
    assert [x for chunk in ts.values for x in chunk] == [0, 1, 2]
    ts.assert_error(ValueError)


async def test_cancel_cancels_upstream() -> None:
    source = ManualPublisher()
    ts = TestSubscriber[list[int]](initial_request=1)
    Flux.from_publisher(source).batch(4).subscribe(ts)
    source.push(7)
    await ts.wait_for_values(1)
    ts.cancel()
    assert source.cancelled


async def test_an_upstream_beyond_its_demand_fails_the_stream() -> None:
    source = ManualPublisher()
    ts = TestSubscriber[list[int]]()
    Flux.from_publisher(source).batch(2).subscribe(ts)
    source.push(0, 1, 2)
    ts.request(5)
    await ts.wait_terminated()
    ts.assert_values([0, 1]).assert_error(MissingBackpressureError)
    assert source.cancelled


def test_max_items_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_items"):
        Flux.range(0, 3).batch(0)
