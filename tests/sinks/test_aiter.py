"""The pull buffer (`PullSubscriber`, `pull`) on its own and standing in for an async boundary."""

from __future__ import annotations

import asyncio
import logging

import pytest

from reactive_aio import Flux, MissingBackpressureError, NullSignalError
from reactive_aio._core import items_at_hand
from reactive_aio._sinks._aiter import IDLE, PullSubscriber, pull

from ..manual_publisher import ManualPublisher


async def test_pull_behind_publish_on_takes_the_boundarys_window() -> None:
    subscriber = pull(Flux.range(0, 10).publish_on(buffer_size=4), window=1)
    assert subscriber.window == 4
    assert subscriber.poll() is IDLE  # an async boundary never delivers on the spot
    items = [await subscriber.next() for _ in range(4)]
    assert items == [0, 1, 2, 3]
    assert subscriber.buffered <= 4
    items += [await subscriber.next() for _ in range(6)]
    assert items == list(range(10))
    with pytest.raises(StopAsyncIteration):
        await subscriber.next()


async def test_pull_without_a_boundary_keeps_its_own_window() -> None:
    subscriber = pull(Flux.range(0, 10), window=3)
    assert subscriber.window == 3
    assert subscriber.poll() == 0  # a synchronous source delivers on the spot
    assert subscriber.take(10) == [1, 2]
    subscriber.cancel()


async def test_a_subscribed_pull_buffer_stands_in_for_no_boundary() -> None:
    subscriber = pull(Flux.never(), window=2)
    assert not subscriber.take_boundary(8, 6)
    assert subscriber.window == 2
    subscriber.cancel()
    assert not subscriber.take_boundary(8, 6)


def test_no_stand_in_without_a_running_loop() -> None:
    subscriber = pull(Flux.never(), window=2)
    assert not subscriber.take_boundary(8, 6)
    subscriber.cancel()


async def test_an_upstream_beyond_the_window_fails_the_stream_after_the_window(
    caplog: pytest.LogCaptureFixture,
) -> None:
    manual = ManualPublisher()
    subscriber = PullSubscriber[int](2, True)
    manual.subscribe(subscriber)  # directly: no loop boundary in between
    assert manual.requests == [2]
    assert manual.subscriber is not None
    for item in (1, 2, 3, 4):  # 3 and 4 were never requested
        manual.subscriber.on_next(item)
    assert manual.cancelled
    assert subscriber.buffered == 2
    with caplog.at_level(logging.ERROR, logger="reactive_aio"):
        manual.subscriber.on_error(OSError("too late"))  # nobody left to tell (rule 1.7)
    assert "too late" in caplog.text
    assert [await subscriber.next(), await subscriber.next()] == [1, 2]
    with pytest.raises(MissingBackpressureError, match=r"rule 1\.1"):
        await subscriber.next()


async def test_a_waiting_reader_wakes_when_the_boundary_replacement_delivers() -> None:
    subscriber = pull(Flux.range(0, 3).publish_on(buffer_size=2), window=8)

    async def read_all() -> list[int | object]:
        return [await subscriber.next() for _ in range(3)]

    assert await asyncio.wait_for(read_all(), 5) == [0, 1, 2]
    subscriber.cancel()


async def test_items_at_hand_are_pulled_a_window_at_a_time_with_the_sources_checks() -> None:
    pulled: list[int] = []

    def seen(i: int) -> int:
        pulled.append(i)
        if i == 7:
            raise ValueError("stage failed")
        return i

    subscriber = pull(Flux.range(0, 10).map(seen), window=3)
    assert pulled == []  # nothing before the reader asks
    assert subscriber.take(2) == [0, 1]
    assert pulled == [0, 1, 2]  # the window, no more
    assert subscriber.take(10, ahead=True) == [2]
    assert pulled == [0, 1, 2]  # not while the reader still holds the items it took
    await asyncio.sleep(0)
    assert pulled == [0, 1, 2, 3, 4, 5]  # topped up for them once it suspended (their write)
    assert [await subscriber.next() for _ in range(4)] == [3, 4, 5, 6]
    with pytest.raises(ValueError, match="stage failed"):  # after the items before it
        await subscriber.next()

    nulls = pull(Flux.from_iterable([1, None, 3]), window=8)
    assert await nulls.next() == 1
    with pytest.raises(NullSignalError, match="#1"):
        await nulls.next()

    ended = pull(Flux.from_iterable(["a", "b"]), window=2)
    assert [item async for item in ended.items()] == ["a", "b"]


async def test_a_chain_that_drops_items_is_subscribed_not_pulled() -> None:
    # A filter's drops are paced by a drain that gives the loop a turn; an at-hand pull of
    # a window could run through any number of them at once.
    assert items_at_hand(Flux.range(0, 10).filter(bool)) is None
    assert items_at_hand(Flux.range(0, 10).publish_on()) is None
    assert items_at_hand(Flux.range(0, 10).map(str)) is not None
    subscriber = pull(Flux.range(0, 10).filter(lambda i: i % 3 == 0), window=2)
    assert [item async for item in subscriber.items()] == [0, 3, 6, 9]


async def test_async_for_asks_for_more_as_the_reader_comes_to_the_item_that_frees_a_batch() -> None:
    manual = ManualPublisher()
    subscriber = PullSubscriber[int](8, True)  # a batch of 6
    manual.subscribe(subscriber)
    items = subscriber.items()
    sent = 0

    def held() -> int:  # requested and not arrived, buffered, or taken and not handed out
        return sum(manual.requests) - sent + (subscriber.scan_stage().buffered or 0)

    manual.push(*range(8))
    sent = 8
    seen: list[int] = []
    for expected_requests in ([8],) * 5 + ([8, 6],) * 3:
        seen.append(await anext(items))
        # the 6th item frees a batch: asked for as it is handed out, not when it was taken
        assert manual.requests == expected_requests
        assert held() <= 8
    manual.push(*range(8, 14))
    sent = 14
    for expected_requests in ([8, 6],) * 3 + ([8, 6, 6],) * 3:
        seen.append(await anext(items))
        assert manual.requests == expected_requests
        assert held() <= 8
    assert seen == list(range(14))
    await items.aclose()
    assert manual.cancelled
