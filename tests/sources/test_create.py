"""Flux.create: a thread-safe sink with overflow policies and exact counts."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from typing import Any

import pytest

from reactive_aio import (
    MAX_DEMAND,
    Flux,
    FluxSink,
    MissingBackpressureError,
    NullSignalError,
    Overflow,
)
from reactive_aio._core import DRAIN_BATCH
from reactive_aio.testing import TestSubscriber


def test_create_waits_for_demand_and_completes() -> None:
    sinks: list[FluxSink[int]] = []
    ts = TestSubscriber[int]()
    Flux.create(sinks.append).subscribe(ts)
    (sink,) = sinks
    assert sink.requested == 0
    sink.next(1)
    sink.next(2)
    ts.assert_no_values()
    assert sink.buffered == 2
    ts.request(1)
    ts.assert_values(1)
    ts.request(5)
    assert sink.requested == 4
    sink.complete()
    ts.assert_values(1, 2).assert_complete().assert_max_depth()
    assert (sink.produced, sink.delivered, sink.dropped) == (2, 2, 0)


def test_create_none_item_raises_to_the_caller() -> None:
    sinks: list[FluxSink[int]] = []
    ts = TestSubscriber[int](initial_request=5)
    Flux.create(sinks.append).subscribe(ts)
    with pytest.raises(NullSignalError, match=r"sink\.next"):
        sinks[0].next(None)  # type: ignore[arg-type]
    sinks[0].next(1)
    ts.assert_values(1).assert_not_terminated()


def test_create_raising_emitter_is_an_error_after_items() -> None:
    def emitter(sink: FluxSink[int]) -> None:
        sink.next(1)
        raise ValueError("emitter failed")

    ts = TestSubscriber[int]()
    Flux.create(emitter).subscribe(ts)
    ts.assert_no_values().assert_not_terminated()
    ts.request(1)
    ts.assert_values(1).assert_error(ValueError, match="emitter failed")


def test_create_error_and_cancel_callbacks() -> None:
    sinks: list[FluxSink[int]] = []
    ts = TestSubscriber[int](initial_request=1)
    Flux.create(sinks.append).subscribe(ts)
    cancelled: list[bool] = []
    sinks[0].on_cancel(lambda: cancelled.append(True))
    ts.cancel()
    assert cancelled == [True]
    assert sinks[0].cancelled
    sinks[0].next(1)  # ignored after cancel
    ts.assert_no_values()
    failed = TestSubscriber[int](initial_request=1)
    Flux.create(lambda sink: sink.error(OSError("down"))).subscribe(failed)
    failed.assert_error(OSError)


@pytest.mark.parametrize(
    ("overflow", "expected"),
    [
        (Overflow.DROP, [0]),
        (Overflow.LATEST, [0, 9]),
        (Overflow.BUFFER(3, then="drop_oldest"), [0, 7, 8, 9]),
        (Overflow.BUFFER(3, then="drop_latest"), [0, 1, 2, 3]),
    ],
)
def test_create_overflow_policies(overflow: Overflow, expected: list[int]) -> None:
    sinks: list[FluxSink[int]] = []
    dropped: list[int] = []
    ts = TestSubscriber[int](initial_request=1)
    Flux.create(sinks.append, overflow=overflow, on_dropped=dropped.append).subscribe(ts)
    sink = sinks[0]
    for i in range(10):
        sink.next(i)
    sink.complete()
    ts.request(100)
    ts.assert_values(*expected).assert_complete()
    assert sink.produced == sink.delivered + sink.dropped == 10
    assert sorted(dropped + ts.values) == list(range(10))


def test_create_error_policy_cancels_and_fails() -> None:
    sinks: list[FluxSink[int]] = []
    cancelled: list[bool] = []

    def emitter(sink: FluxSink[int]) -> None:
        sink.on_cancel(lambda: cancelled.append(True))
        sinks.append(sink)

    ts = TestSubscriber[int](initial_request=1)
    Flux.create(emitter, overflow=Overflow.ERROR).subscribe(ts)
    sinks[0].next(0)
    sinks[0].next(1)
    ts.assert_values(0).assert_error(MissingBackpressureError, match="1 arrived without demand")
    assert cancelled == [True]
    assert sinks[0].dropped == 1


def test_create_raising_on_dropped_fails_the_stream() -> None:
    def boom(item: int) -> None:
        raise ValueError(f"drop {item}")

    sinks: list[FluxSink[int]] = []
    ts = TestSubscriber[int]()
    Flux.create(sinks.append, overflow=Overflow.DROP, on_dropped=boom).subscribe(ts)
    sinks[0].next(5)
    ts.assert_error(ValueError, match="drop 5")
    assert sinks[0].cancelled


async def test_create_send_waits_for_demand() -> None:
    ts = TestSubscriber[int]()

    async def produce(sink: FluxSink[int]) -> None:
        for i in range(100):
            await sink.send(i)
        sink.complete()

    tasks: list[asyncio.Task[None]] = []
    Flux.create(
        lambda sink: tasks.append(asyncio.get_running_loop().create_task(produce(sink)))
    ).subscribe(ts)
    for _ in range(10):
        ts.request(10)
        await ts.wait_for_values(len(ts.values) + 10)
    await ts.wait_terminated()
    await tasks[0]
    ts.assert_values(*range(100)).assert_complete()


async def test_create_next_from_another_thread() -> None:
    ts = TestSubscriber[int](initial_request=1000)

    def emitter(sink: FluxSink[int]) -> None:
        def run() -> None:
            for i in range(1000):
                sink.next(i)
            sink.complete()

        threading.Thread(target=run).start()

    Flux.create(emitter).subscribe(ts)
    await ts.wait_terminated()
    ts.assert_values(*range(1000)).assert_complete()
    assert ts.threads == {threading.get_ident()}


@pytest.mark.parametrize(
    "overflow",
    [
        Overflow.DROP,
        Overflow.LATEST,
        Overflow.BUFFER(100, then="drop_oldest"),
        Overflow.BUFFER(100, then="drop_latest"),
    ],
)
def test_create_million_items_bounded_memory_exact_counts(overflow: Overflow) -> None:
    """1,000,000 items pushed at a subscriber taking 1 in 50: bounded buffer, exact drops."""
    sinks: list[FluxSink[int]] = []
    ts = TestSubscriber[int]()
    Flux.create(sinks.append, overflow=overflow).subscribe(ts)
    sink = sinks[0]
    largest = 0
    for i in range(1_000_000):
        sink.next(i)
        if i % 50 == 0:
            ts.request(1)
            largest = max(largest, sink.buffered)
    sink.complete()
    ts.request(1_000)
    ts.assert_complete()
    assert largest <= overflow.max_size
    assert sink.produced == 1_000_000
    assert sink.produced == sink.delivered + sink.dropped
    assert sink.delivered == len(ts.values)


def test_overflow_rejects_bad_values() -> None:
    with pytest.raises(ValueError, match="max_size"):
        Overflow.BUFFER(-1)
    with pytest.raises(ValueError, match="then"):
        Overflow.BUFFER(1, then="later")  # type: ignore[arg-type]


@pytest.mark.parametrize("ended_by", ["complete", "cancel"])
async def test_sink_error_after_the_stream_ended_is_reported(
    ended_by: str, caplog: pytest.LogCaptureFixture
) -> None:
    reported: list[Any] = []
    asyncio.get_running_loop().set_exception_handler(lambda _, context: reported.append(context))
    sinks: list[FluxSink[int]] = []
    ts = TestSubscriber[int](initial_request=1)
    Flux.create(sinks.append).subscribe(ts)
    if ended_by == "complete":
        sinks[0].complete()
    else:
        ts.cancel()
    late = ValueError("late")
    with caplog.at_level(logging.ERROR, logger="reactive_aio"):
        sinks[0].error(late)
    assert [c["exception"] for c in reported] == [late]
    assert [r.exc_info[1] for r in caplog.records if r.exc_info] == [late]
    assert not ts.errors


async def test_sink_next_from_a_thread_applies_the_policy_on_that_thread() -> None:
    sinks: list[FluxSink[int]] = []
    ts = TestSubscriber[int](initial_request=10)
    Flux.create(sinks.append, overflow=Overflow.DROP).subscribe(ts)
    sink = sinks[0]

    def produce() -> None:
        for i in range(100_000):
            sink.next(i)

    producer = threading.Thread(target=produce)
    producer.start()
    producer.join()  # the loop is blocked: nothing handed to it has run yet
    assert sink.dropped == 99_990  # decided on the producer thread, not queued for the loop
    assert sink.buffered == 10  # what the demand covers waits for the loop, nothing more
    await ts.wait_for_values(10)
    ts.assert_values(*range(10))
    assert sink.produced == sink.delivered + sink.dropped == 100_000


async def test_a_producer_thread_runs_at_most_the_hand_off_ahead_of_the_loop() -> None:
    sinks: list[FluxSink[int]] = []
    ts = TestSubscriber[int](initial_request=MAX_DEMAND)
    Flux.create(sinks.append, overflow=Overflow.DROP).subscribe(ts)
    sink = sinks[0]

    def produce() -> None:
        for i in range(5_000):
            sink.next(i)
        sink.complete()

    producer = threading.Thread(target=produce)
    producer.start()
    deadline = time.monotonic() + 10
    handoff = DRAIN_BATCH  # the most items a producer thread has on their way to the loop
    while sink.buffered < handoff and time.monotonic() < deadline:
        producer.join(0.001)  # the loop stays blocked, so the hand-off fills up
    producer.join(0.05)
    assert producer.is_alive()  # it waits for the loop instead of queueing more
    assert sink.buffered == handoff
    await ts.wait_terminated(timeout=10)
    producer.join()
    ts.assert_values(*range(5_000)).assert_complete()
    assert sink.dropped == 0
