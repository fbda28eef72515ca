"""batch: what arrived while downstream was busy, as one list, never waiting for it to fill."""

from __future__ import annotations

import asyncio
import types
from collections.abc import AsyncIterator, Callable
from typing import cast

import pytest

from reactive_aio import Flux, MissingBackpressureError
from reactive_aio.testing import TestSubscriber

from ..manual_publisher import ManualPublisher


def _reader(chunks: AsyncIterator[list[int]]) -> str:
    """What an async for over a batch reads: the pull buffer's ``items`` (of the lists the
    batch drain emits) or its ``slices`` (of its own items, the batch fused into it)."""
    assert isinstance(chunks, types.AsyncGeneratorType)
    return chunks.ag_code.co_name


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
    assert _reader(chunks) == "items"  # not fused: the batch drain gathers the items
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


# -- fused into the reader's buffer: async for right after publish_on, or over items at hand --


def _double(x: int) -> int:
    return 2 * x


def _even(x: int) -> bool:
    return x % 2 == 0


def _fail_at(n: int) -> Callable[[int], int]:
    def fail(x: int) -> int:
        if x == n:
            raise ValueError(f"bad {x}")
        return x

    return fail


FUSED_CASES: dict[str, Callable[[], Flux[list[int]]]] = {
    "publish_on over items at hand": lambda: (
        Flux.range(0, 3_000).map(_double).publish_on(buffer_size=64).batch(16)
    ),
    "publish_on over a subscribed source": lambda: (
        Flux.range(0, 3_000).filter(_even).publish_on(buffer_size=64).batch(16)
    ),
    "items at hand": lambda: Flux.range(0, 3_000).map(_double).batch(16),
    "failing publish_on over items at hand": lambda: (
        Flux.range(0, 3_000).map(_fail_at(1_000)).publish_on(buffer_size=64).batch(16)
    ),
    "failing items at hand": lambda: Flux.range(0, 3_000).map(_fail_at(1_000)).batch(16),
    "a None item": lambda: (
        Flux.from_iterable(cast("list[int]", [0, 1, None, 3])).publish_on().batch(4)
    ),
}


async def _read(chunks: AsyncIterator[list[int]]) -> tuple[list[list[int]], str]:
    """The lists an async for reads and how it ended."""
    read: list[list[int]] = []
    try:
        async for chunk in chunks:
            read.append(chunk)  # noqa: PERF401 - the items before the error are the point
    except Exception as exc:
        return read, f"{type(exc).__name__}: {exc}"
    return read, "complete"


async def _subscribed(flux: Flux[list[int]]) -> tuple[list[list[int]], str]:
    """The lists a subscriber (the unfused operator) gets and how the stream ended."""
    ts = TestSubscriber[list[int]](initial_request=1_000_000)
    flux.subscribe(ts)
    await ts.wait_terminated()
    if ts.errors:
        return ts.values, f"{type(ts.errors[0]).__name__}: {ts.errors[0]}"
    return ts.values, "complete"


@pytest.mark.parametrize("case", FUSED_CASES)
async def test_fused_batches_carry_what_the_operator_does(case: str) -> None:
    chunks = FUSED_CASES[case]().iterate()
    assert _reader(chunks) == "slices"  # the reader's buffer, sliced: no batch drain
    fused, fused_end = await _read(chunks)
    unfused, unfused_end = await _subscribed(FUSED_CASES[case]())
    assert [x for chunk in fused for x in chunk] == [x for chunk in unfused for x in chunk]
    assert fused_end == unfused_end
    assert all(0 < len(chunk) <= 16 for chunk in fused)


async def test_fused_batches_after_publish_on_hold_at_most_the_buffer() -> None:
    # Unfused, the boundary's 32, the batch's 16 and the iterator's 256 lists could be ahead.
    produced = consumed = 0

    def count(x: int) -> int:
        nonlocal produced
        produced += 1
        return x

    async for chunk in Flux.range(0, 5_000).map(count).publish_on(buffer_size=32).batch(16):
        assert 0 < len(chunk) <= 16
        consumed += len(chunk)
        assert produced - consumed <= 32
        await asyncio.sleep(0)  # a consumer that lets upstream run
    assert consumed == 5_000


async def test_fused_batches_after_publish_on_never_wait_for_a_list_to_fill() -> None:
    source = ManualPublisher()
    chunks = Flux.from_publisher(source).publish_on(buffer_size=8).batch(256).iterate()
    first = asyncio.ensure_future(anext(chunks))
    for _ in range(5):
        await asyncio.sleep(0)
    assert source.requests == [8]
    source.push(1)
    assert await asyncio.wait_for(first, 1.0) == [1]
    source.push(2, 3)
    assert await anext(chunks) == [2, 3]
    assert source.requesting_tasks == [None] * len(source.requests)  # from loop callbacks
    await chunks.aclose()  # leaving early cancels
    assert source.cancelled


async def test_leaving_fused_batches_early_stops_the_source() -> None:
    produced = 0

    def count(x: int) -> int:
        nonlocal produced
        produced += 1
        return x

    for flux in (
        Flux.range(0, 100_000).map(count).publish_on(buffer_size=64).batch(16),
        Flux.range(0, 100_000).map(count).batch(16),
    ):
        produced = 0
        async for _ in flux:
            break
        seen = produced
        for _ in range(5):
            await asyncio.sleep(0)
        assert produced == seen <= 64
