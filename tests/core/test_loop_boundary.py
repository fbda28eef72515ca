"""The loop boundary: a publisher of another library that signals from its own thread.

Each test forces the interleaving that used to break: the publisher's worker thread emits and
completes while the loop sits idle in an ``await``, so nothing else would wake it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from reactive_aio import Flux, NullSignalError, Subscriber, Subscription, to_async_iterator
from reactive_aio._core import LoopBoundary, adopt
from reactive_aio.testing import TestSubscriber

from ..thread_publisher import ThreadPublisher

WAIT = 10.0
"""Generous: on success everything arrives within a few loop turns."""

COLLECTORS: dict[str, tuple[Callable[[Flux[int]], Awaitable[Any]], object]] = {
    "to_list": (lambda flux: flux.to_list(), [1, 2, 3, 4, 5]),
    "first": (lambda flux: flux.first(), 1),
    "last": (lambda flux: flux.last(), 5),
    "reduce": (lambda flux: flux.reduce(lambda a, x: a + x, 0), 15),
}


@pytest.mark.parametrize("collector", sorted(COLLECTORS))
async def test_a_collector_completes_when_the_publisher_ends_from_its_thread(
    collector: str,
) -> None:
    collect, expected = COLLECTORS[collector]
    loop_thread = threading.get_ident()
    seen: list[int] = []

    def record(x: int) -> int:
        seen.append(threading.get_ident())
        return x + 1

    publisher = ThreadPublisher(range(5))
    result = await asyncio.wait_for(collect(Flux.from_publisher(publisher).map(record)), WAIT)
    assert result == expected
    assert publisher.signal_threads - {loop_thread}, "the publisher did not use its thread"
    assert set(seen) == {loop_thread}, "map's function ran outside the loop's thread"
    publisher.join()


async def test_delay_elements_over_a_thread_publisher_delivers_every_item() -> None:
    loop_thread = threading.get_ident()
    seen: set[int] = set()
    publisher = ThreadPublisher(range(20))
    flux = Flux.from_publisher(publisher).do_on_next(lambda _: seen.add(threading.get_ident()))
    result = await asyncio.wait_for(flux.delay_elements(0.001).to_list(), WAIT)
    assert result == list(range(20))
    assert seen == {loop_thread}, "delay_elements was fed outside the loop's thread"
    publisher.join()


async def test_subscribe_callbacks_and_async_for_run_on_the_loop_thread() -> None:
    loop_thread = threading.get_ident()
    threads: list[int] = []
    done = asyncio.get_running_loop().create_future()
    Flux.from_publisher(ThreadPublisher(range(3), subscribe_from_worker=True)).subscribe(
        on_next=lambda _: threads.append(threading.get_ident()),
        on_complete=lambda: done.set_result(threading.get_ident()),
    )
    assert await asyncio.wait_for(done, WAIT) == loop_thread
    assert threads == [loop_thread] * 3
    items = [x async for x in to_async_iterator(ThreadPublisher(range(300)), prefetch=16)]
    assert items == list(range(300))


async def test_signals_from_a_thread_are_handed_over_in_order_in_batches(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    wakeups = 0
    flush = LoopBoundary._flush

    def counting_flush(self: LoopBoundary[Any]) -> None:
        nonlocal wakeups
        wakeups += 1
        flush(self)

    monkeypatch.setattr(LoopBoundary, "_flush", counting_flush)
    publisher = ThreadPublisher(range(10_000))
    subscriber = TestSubscriber[int]()
    Flux.from_publisher(publisher).subscribe(subscriber)
    subscriber.request(10_000)
    publisher.join()  # the loop is blocked meanwhile: every signal queues up behind one wake-up
    await subscriber.wait_terminated(WAIT)
    subscriber.assert_value_count(10_000).assert_complete()
    assert subscriber.values == list(range(10_000))
    assert wakeups <= 10_000 // 1024 + 2, f"{wakeups} loop wake-ups for one batch of signals"


async def test_a_publisher_signalling_inside_the_loop_is_passed_on_in_place(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(LoopBoundary, "_flush", _never)
    subscriber = TestSubscriber[int](initial_request=5)
    Flux.from_publisher(_OnLoopPublisher(range(5))).subscribe(subscriber)
    subscriber.assert_values(0, 1, 2, 3, 4).assert_complete()  # synchronously, no hand-over


async def test_a_none_item_raises_to_the_publisher_and_fails_the_stream() -> None:
    subscription = _Recording()
    subscriber = TestSubscriber[int](initial_request=1)
    boundary = LoopBoundary(subscriber, asyncio.get_running_loop())
    boundary.on_subscribe(subscription)
    with pytest.raises(NullSignalError, match=r"rule 2\.13"):
        boundary.on_next(None)  # type: ignore[arg-type]
    subscriber.assert_error(NullSignalError)
    assert subscription.cancelled, "the publisher must consider the subscription cancelled"
    second = _Recording()
    boundary.on_subscribe(second)
    assert second.cancelled, "a second subscription must be cancelled (rule 2.5)"


async def test_a_subscriber_raising_on_a_handed_over_signal_is_cancelled_and_reported() -> None:
    loop = asyncio.get_running_loop()
    reported: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    received: list[int] = []

    class Fragile(Subscriber[int]):
        terminated = False

        def on_subscribe(self, subscription: Subscription) -> None:
            subscription.request(100)

        def on_next(self, item: int) -> None:
            received.append(item)
            raise RuntimeError("the subscriber broke")

        def on_error(self, error: BaseException) -> None:
            self.terminated = True

        def on_complete(self) -> None:
            self.terminated = True

    publisher = ThreadPublisher(range(100))
    subscriber = Fragile()
    try:
        Flux.from_publisher(publisher).subscribe(subscriber)
        await asyncio.to_thread(publisher.join)
        for _ in range(10):
            await asyncio.sleep(0)
    finally:
        loop.set_exception_handler(None)
    assert received == [0], "signals after the subscriber raised (rule 2.13)"
    assert len(reported) == 1
    assert "Fragile.on_next raised" in reported[0]["message"]
    assert not subscriber.terminated


async def test_an_on_backpressure_operator_takes_the_foreign_thread_itself() -> None:
    # Its overflow policy acts on the producer's thread (what it drops never reaches the
    # loop), so the publisher subscribes it directly, not through a boundary.
    subscribers: list[Subscriber[int]] = []

    class Recording:
        def subscribe(self, subscriber: Subscriber[int]) -> None:
            subscribers.append(subscriber)

    Flux.from_publisher(Recording()).on_backpressure_drop().subscribe(TestSubscriber[int]())
    Flux.from_publisher(Recording()).map(lambda x: x).subscribe(TestSubscriber[int]())
    assert [type(s).__name__ for s in subscribers] == ["OverflowSubscriber", "LoopBoundary"]


def test_library_publishers_pass_through_adopt() -> None:
    flux = Flux.range(0, 3)
    assert adopt(flux) is flux
    foreign = _OnLoopPublisher(range(3))
    adopted = adopt(foreign)
    assert adopted is not foreign
    assert adopt(adopted) is adopted


def _never(self: object) -> None:
    raise AssertionError("a signal from inside the loop was handed over")


class _OnLoopPublisher:
    """A foreign publisher that emits on its caller's stack, within demand."""

    def __init__(self, items: range) -> None:
        self.items = list(items)

    def subscribe(self, subscriber: Subscriber[int]) -> None:
        subscriber.on_subscribe(_ListSubscription(self.items, subscriber))


class _ListSubscription(Subscription):
    def __init__(self, items: list[int], subscriber: Subscriber[int]) -> None:
        self.items = items
        self.subscriber: Subscriber[int] | None = subscriber
        self.index = 0

    def request(self, n: int) -> None:
        while n > 0 and self.subscriber is not None and self.index < len(self.items):
            self.index += 1
            n -= 1
            self.subscriber.on_next(self.items[self.index - 1])
        subscriber = self.subscriber
        if subscriber is not None and self.index == len(self.items):
            self.subscriber = None
            subscriber.on_complete()

    def cancel(self) -> None:
        self.subscriber = None


class _Recording(Subscription):
    def __init__(self) -> None:
        self.cancelled = False

    def request(self, n: int) -> None:
        pass

    def cancel(self) -> None:
        self.cancelled = True
