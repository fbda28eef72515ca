"""publish_on: an async boundary with a bounded prefetch buffer."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterator
from typing import Any, cast

import pytest
import uvloop
from hypothesis import given, settings, strategies as st

from reactive_aio import Flux, MissingBackpressureError, NullSignalError, snapshot
from reactive_aio.testing import ProtocolChecker, TestSubscriber, checked

from ..manual_publisher import ManualPublisher
from ..thread_publisher import ThreadPublisher


async def test_publish_on_delivers_everything_in_order() -> None:
    assert await Flux.range(0, 10_000).publish_on(buffer_size=16).to_list() == list(range(10_000))


async def test_publish_on_waits_for_demand() -> None:
    ts = TestSubscriber[int]()
    Flux.range(0, 5).publish_on(buffer_size=4).subscribe(ts)
    await asyncio.sleep(0)
    ts.assert_no_values()
    ts.request(1)
    await ts.wait_for_values(1)
    ts.assert_values(0).assert_not_terminated()
    ts.request(10)
    await ts.wait_terminated()
    ts.assert_values(0, 1, 2, 3, 4).assert_complete().assert_max_depth()


async def test_publish_on_does_not_emit_on_the_producer_stack() -> None:
    source = ManualPublisher()
    ts = TestSubscriber[int](initial_request=10)
    Flux.from_publisher(source).publish_on(buffer_size=8).subscribe(ts)
    assert source.subscriber is not None
    source.subscriber.on_next(1)
    ts.assert_no_values()  # only scheduled
    await ts.wait_for_values(1)
    ts.assert_values(1)


async def test_publish_on_prefetches_then_replenishes_three_quarters() -> None:
    source = ManualPublisher()
    ts = TestSubscriber[int]()
    Flux.from_publisher(source).publish_on(buffer_size=8).subscribe(ts)
    assert source.requests == [8]
    assert source.subscriber is not None
    for i in range(8):
        source.subscriber.on_next(i)
    ts.request(5)
    await ts.wait_for_values(5)
    assert source.requests == [8]
    ts.request(1)
    await ts.wait_for_values(6)
    assert source.requests == [8, 6]


async def test_publish_on_overflowing_upstream_is_an_error() -> None:
    source = ManualPublisher()
    ts = TestSubscriber[int]()
    Flux.from_publisher(source).publish_on(buffer_size=2).subscribe(ts)
    assert source.subscriber is not None
    for i in range(3):
        source.subscriber.on_next(i)
    assert source.cancelled
    ts.request(5)
    await ts.wait_terminated()
    ts.assert_values(0, 1).assert_error(MissingBackpressureError, match="rule 1.1")


async def test_publish_on_cancel_cancels_upstream() -> None:
    source = ManualPublisher()
    ts = TestSubscriber[int](initial_request=1)
    Flux.from_publisher(source).publish_on().subscribe(ts)
    ts.cancel()
    assert source.cancelled


async def test_publish_on_error_arrives_after_buffered_items() -> None:
    ts = TestSubscriber[int](initial_request=10)
    Flux.error(OSError("down")).publish_on().subscribe(ts)
    await ts.wait_terminated()
    ts.assert_error(OSError)
    source = ManualPublisher()
    ts2 = TestSubscriber[int]()
    Flux.from_publisher(source).publish_on().subscribe(ts2)
    assert source.subscriber is not None
    source.subscriber.on_next(1)
    source.subscriber.on_error(OSError("late"))
    ts2.request(1)
    await ts2.wait_terminated()
    ts2.assert_values(1).assert_error(OSError, match="late")


async def test_publish_on_raising_subscriber_cancels_upstream() -> None:
    source = ManualPublisher()

    def boom(item: int) -> None:
        raise ValueError("subscriber failed")

    ts = TestSubscriber[int](initial_request=5, on_next_callback=boom)
    Flux.from_publisher(source).publish_on().subscribe(ts)
    assert source.subscriber is not None
    source.subscriber.on_next(1)
    await ts.wait_for_values(1)
    assert source.cancelled  # rule 2.13: the subscription is treated as cancelled


async def test_publish_on_takes_items_from_another_thread() -> None:
    source = ManualPublisher()
    ts = TestSubscriber[int](initial_request=100)
    Flux.from_publisher(source).publish_on(buffer_size=128).subscribe(ts)
    subscriber = source.subscriber
    assert subscriber is not None

    def produce() -> None:
        for i in range(100):
            subscriber.on_next(i)
        subscriber.on_complete()

    thread = threading.Thread(target=produce)
    thread.start()
    await ts.wait_terminated()
    thread.join()
    ts.assert_values(*range(100)).assert_complete()
    assert ts.threads == {threading.get_ident()}


def test_publish_on_needs_a_loop() -> None:
    ts = TestSubscriber[int](initial_request=1)
    Flux.range(0, 1).publish_on().subscribe(ts)
    ts.assert_error(RuntimeError, match="running event loop")


def test_publish_on_rejects_bad_buffer_size() -> None:
    with pytest.raises(ValueError, match="buffer_size"):
        Flux.range(0, 1).publish_on(buffer_size=0)


# -- async for behind publish_on: the pull buffer takes the boundary's place ------------------


async def _collect(items: AsyncIterable[int], received: list[int]) -> None:
    """Append what *items* yields to *received* (so a test sees the items before an error)."""
    async for x in items:
        received.append(x)  # noqa: PERF401 - the items before the error are the point


async def _turns(count: int = 5) -> None:
    """Let the loop run a few callbacks (deferred requests, hand-overs)."""
    for _ in range(count):
        await asyncio.sleep(0)


async def test_async_for_behind_publish_on_delivers_everything_in_order() -> None:
    flux = Flux.range(0, 10_000).publish_on(buffer_size=16)
    assert [x async for x in flux] == list(range(10_000))
    assert [x async for x in flux.iterate(prefetch=3)] == list(range(10_000))


async def test_async_for_behind_publish_on_holds_at_most_the_buffer() -> None:
    # Without fusion the boundary's 32 plus the iterator's own 256 could be ahead.
    produced = consumed = 0

    def count(x: int) -> int:
        nonlocal produced
        produced += 1
        return x

    async for _ in Flux.range(0, 5_000).map(count).publish_on(buffer_size=32):
        consumed += 1
        assert produced - consumed <= 32
        if consumed % 7 == 0:
            await asyncio.sleep(0)  # a consumer that lets upstream run
    assert consumed == 5_000


async def test_async_for_behind_publish_on_asks_upstream_only_as_items_are_taken() -> None:
    source = ManualPublisher()
    iterator = Flux.from_publisher(source).publish_on(buffer_size=8).iterate()
    await _turns()
    assert source.requests == [8]
    source.push(*range(8))
    taken = [await anext(iterator) for _ in range(5)]
    await _turns()
    assert source.requests == [8], "nothing more until three quarters of the buffer are taken"
    taken.append(await anext(iterator))
    await _turns()
    assert source.requests == [8, 6]
    assert taken == list(range(6))
    await iterator.aclose()
    assert source.cancelled


async def test_async_for_behind_publish_on_requests_from_loop_callbacks() -> None:
    # The boundary's promise: upstream never emits on the consumer's stack.
    source = ManualPublisher()
    iterator = Flux.from_publisher(source).publish_on(buffer_size=4).iterate()
    assert source.requests == []  # not even the first request on the subscriber's stack
    await _turns()
    source.push(0, 1, 2, 3)
    received = [await anext(iterator) for _ in range(3)]  # the third one asks for 3 more
    assert source.requests == [4]
    await _turns()
    source.push(4, 5, 6)
    received += [await anext(iterator) for _ in range(4)]
    await iterator.aclose()
    assert received == list(range(7))
    assert source.requests[:2] == [4, 3]
    assert source.requesting_tasks == [None] * len(source.requests)


async def test_async_for_behind_publish_on_never_emits_in_the_readers_task() -> None:
    emitting_tasks: set[asyncio.Task[object] | None] = set()

    def record(x: int) -> int:
        emitting_tasks.add(asyncio.current_task())
        return x

    total = 0
    async for x in Flux.range(0, 2_000).map(record).publish_on(buffer_size=16):
        total += x
    assert total == sum(range(2_000))
    assert emitting_tasks == {None}  # loop callbacks only, never the reader's __anext__


async def test_async_for_behind_publish_on_lets_the_loop_run_every_batch() -> None:
    turns = 0

    async def count_turns() -> None:
        nonlocal turns
        while True:
            turns += 1
            await asyncio.sleep(0)

    counter = asyncio.create_task(count_turns())
    try:
        async for _ in Flux.range(0, 6_400).publish_on(buffer_size=64):
            pass
    finally:
        counter.cancel()
    assert turns >= 6_400 // 64


async def test_async_for_behind_publish_on_raises_the_error_after_the_items() -> None:
    source = ManualPublisher()
    iterator = aiter(Flux.from_publisher(source).publish_on(buffer_size=8))
    await _turns()
    source.push(0, 1, 2)
    assert source.subscriber is not None
    source.subscriber.on_error(OSError("late"))
    received: list[int] = []
    with pytest.raises(OSError, match="late"):
        await _collect(iterator, received)
    assert received == [0, 1, 2]


async def test_async_for_behind_publish_on_raises_a_stage_error_after_the_items() -> None:
    def fail_on_3(x: int) -> int:
        if x == 3:
            raise RuntimeError("map failed on 3")
        return x

    received: list[int] = []
    with pytest.raises(RuntimeError, match="on 3"):
        await _collect(Flux.range(0, 10).map(fail_on_3).publish_on(), received)
    assert received == [0, 1, 2]


async def test_leaving_async_for_behind_publish_on_cancels_upstream() -> None:
    produced = 0

    def count(x: int) -> int:
        nonlocal produced
        produced += 1
        return x

    async for x in Flux.range(0, 10**9).map(count).publish_on(buffer_size=16):
        if x == 100:
            break
    await _turns(20)
    assert produced <= 101 + 16
    seen = produced
    await _turns(20)
    assert produced == seen


async def test_leaving_async_for_drops_a_request_still_waiting_for_the_loop() -> None:
    source = ManualPublisher()
    iterator = Flux.from_publisher(source).publish_on(buffer_size=8).iterate()
    await _turns()
    source.push(*range(8))
    async for x in iterator:
        if x == 5:  # the sixth item taken: a request of 6 is waiting for the loop
            break
    await iterator.aclose()
    assert source.cancelled
    await _turns()
    assert source.requests == [8]


async def test_async_for_behind_publish_on_fails_an_overflowing_upstream() -> None:
    source = ManualPublisher()
    iterator = aiter(Flux.from_publisher(source).publish_on(buffer_size=2))
    await _turns()
    source.push(0, 1, 2)  # 0 and 1 fill the buffer, 2 is one too many
    assert source.cancelled
    received: list[int] = []
    with pytest.raises(MissingBackpressureError, match=r"rule 1\.1"):
        await _collect(iterator, received)
    assert received == [0, 1]


async def test_async_for_behind_publish_on_refuses_a_none_item() -> None:
    source = ManualPublisher()
    iterator = aiter(Flux.from_publisher(source).publish_on(buffer_size=4))
    await _turns()
    source.push(0)
    assert source.subscriber is not None
    with pytest.raises(NullSignalError):  # raised to the publisher (rule 2.13)
        source.subscriber.on_next(cast(Any, None))  # a broken publisher
    assert source.cancelled
    received: list[int] = []
    with pytest.raises(NullSignalError, match=r"rule 2\.13"):
        await _collect(iterator, received)
    assert received == [0]


async def test_async_for_behind_publish_on_takes_items_from_another_thread() -> None:
    publisher = ThreadPublisher(range(5_000), error=OSError("after the items"))
    delivering_threads: set[int] = set()

    def record(x: int) -> int:
        delivering_threads.add(threading.get_ident())
        return x

    received: list[int] = []
    with pytest.raises(OSError, match="after the items"):
        await _collect(
            Flux.from_publisher(publisher).map(record).publish_on(buffer_size=64), received
        )
    publisher.join()
    assert received == list(range(5_000))
    assert delivering_threads == {threading.get_ident()}


def test_async_for_behind_publish_on_needs_a_loop_at_subscribe_time() -> None:
    iterator = aiter(Flux.range(0, 3).publish_on())  # subscribed outside of a loop

    async def first() -> int:
        return await anext(iterator)

    with pytest.raises(RuntimeError, match="running event loop"):
        asyncio.run(first())


class _SourceFailed(Exception):
    """The error a random source ends with."""


def _random_source(
    items: list[int], fail: bool, kind: str, threads: list[ThreadPublisher[int]]
) -> Flux[int]:
    def sync_items() -> Iterator[int]:
        yield from items
        if fail:
            raise _SourceFailed("the source failed after its items")

    async def async_items() -> AsyncIterator[int]:
        for item in items:
            yield item
        if fail:
            raise _SourceFailed("the source failed after its items")

    if kind == "thread":
        error = _SourceFailed("the source failed after its items") if fail else None
        threads.append(ThreadPublisher(items, error=error))
        return Flux.from_publisher(threads[-1])
    if kind == "async":
        return Flux.from_async_iterable(async_items())
    return Flux.from_iterable(sync_items())


@pytest.mark.parametrize(
    "new_loop", [asyncio.new_event_loop, uvloop.new_event_loop], ids=["asyncio", "uvloop"]
)
@settings(max_examples=100, deadline=None, derandomize=True)
@given(
    items=st.lists(st.integers(0, 50), max_size=60),
    fail=st.booleans(),
    kind=st.sampled_from(["sync", "async", "thread"]),
    buffer_size=st.integers(1, 8),
    stop_after=st.none() | st.integers(1, 60),
    pauses=st.sets(st.integers(0, 60)),
)
def test_async_for_behind_publish_on_any_schedule_gets_the_items_in_order(
    new_loop: Callable[[], asyncio.AbstractEventLoop],
    items: list[int],
    fail: bool,
    kind: str,
    buffer_size: int,
    stop_after: int | None,
    pauses: set[int],
) -> None:
    # Checked between the source and the pull buffer that stands in for the boundary.
    checker = ProtocolChecker(report=False)
    threads: list[ThreadPublisher[int]] = []
    source = checked(_random_source(items, fail, kind, threads), checker=checker)
    produced = 0

    def count(x: int) -> int:
        nonlocal produced
        produced += 1
        return x

    async def consume() -> tuple[list[int], BaseException | None]:
        received: list[int] = []
        try:
            async for x in source.map(count).publish_on(buffer_size=buffer_size):
                received.append(x)
                assert produced - len(received) <= buffer_size
                if len(received) in pauses:
                    await asyncio.sleep(0)  # the reader lets upstream run
                if len(received) == stop_after:
                    break
        except _SourceFailed as exc:
            return received, exc
        return received, None

    loop = new_loop()
    try:
        received, error = loop.run_until_complete(consume())
        loop.run_until_complete(loop.shutdown_asyncgens())
    finally:
        loop.close()
    stopped = stop_after is not None and stop_after <= len(items)
    assert received == (items[:stop_after] if stopped else items)
    assert (error is not None) == (fail and not stopped)
    checker.assert_clean()
    for publisher in threads:
        publisher.join(5.0)
        assert publisher.quiet(), "the source was neither cancelled nor done"


async def test_a_subscriber_of_publish_on_over_a_source_at_hand_gets_it_pulled() -> None:
    def fail_at_5(x: int) -> int:
        if x == 5:
            raise ValueError("bad 5")
        return x

    ts = TestSubscriber[int]()
    Flux.range(0, 9).map(fail_at_5).publish_on(buffer_size=4).subscribe(ts)
    assert ts.subscription is not None
    source = snapshot(ts.subscription).stages[-1]
    assert source.operator == "range → map (pulled)"  # a request at a time, no on_next per item
    ts.request(3)
    await ts.wait_for_values(3)
    ts.assert_values(0, 1, 2).assert_not_terminated()
    ts.request(10)
    await ts.wait_terminated()
    ts.assert_values(0, 1, 2, 3, 4).assert_error(ValueError, "bad 5")  # after the items before it
    assert await Flux.range(0, 2_000).publish_on(buffer_size=16).reduce(lambda a, x: a + x, 0) == (
        1_999_000
    )
