"""W2 boundary: producer task → 256-slot buffer → consumer task.

The cost of handing items from one task to another through a bounded buffer: every variant has a
producer that runs ahead until the buffer is full and a consumer that sums what it receives.
reactive_aio is measured with a subscriber, with ``reduce`` and with ``async for``. Libraries
without a bounded hand-off take their fastest idiom and say what it gives up in their note
(reactivex pushes the whole source into an unbounded queue). aiostream is absent: its pipelines
run in the consumer's task and it has no buffering operator that would put the producer in a
task of its own.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

if __package__ in (None, ""):  # run as a script: make the `benchmarks` package importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._harness import Goal, Variant, Workload
from benchmarks._standalone import standalone

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

BUFFER = 256


def expected(n: int) -> int:
    """The sum of ``range(n)``."""
    return n * (n - 1) // 2


# -- reactive_aio -------------------------------------------------------------------------------


async def reactive_aio_subscriber(n: int) -> object:
    from reactive_aio import Flux

    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    total = 0

    def on_next(x: int) -> None:
        nonlocal total
        total += x

    def on_complete() -> None:
        done.set_result(None)

    Flux.range(0, n).publish_on(buffer_size=BUFFER).subscribe(
        on_next=on_next, on_error=done.set_exception, on_complete=on_complete
    )
    await done
    return total


def _add(acc: int, x: int) -> int:
    return acc + x


async def reactive_aio_reduce(n: int) -> object:
    from reactive_aio import Flux

    return await Flux.range(0, n).publish_on(buffer_size=BUFFER).reduce(_add, 0)


async def reactive_aio_batches(n: int) -> object:
    from reactive_aio import Flux

    total = 0
    async for chunk in Flux.range(0, n).publish_on(buffer_size=BUFFER).batch(BUFFER):
        for x in chunk:
            total += x
    return total


async def reactive_aio_async_for(n: int) -> object:
    from reactive_aio import Flux

    total = 0
    async for x in Flux.range(0, n).publish_on(buffer_size=BUFFER):
        total += x
    return total


# -- floors -------------------------------------------------------------------------------------


async def plain_generator(n: int) -> object:
    total = 0
    for x in iter(range(n)):
        total += x
    return total


async def _agen_range(n: int) -> AsyncIterator[int]:
    for x in range(n):
        yield x


async def async_generator(n: int) -> object:
    total = 0
    async for x in _agen_range(n):
        total += x
    return total


def _queue_of_lists(slots: int, size: int) -> Callable[[int], Coroutine[Any, Any, object]]:
    """A producer task appending items one by one to a list and putting each full list (of
    *size*) into a ``Queue(slots)``; the consumer iterates the lists: ``slots * size`` items in
    flight at most, the hand-off an expert writes for speed."""

    async def run(n: int) -> object:
        queue: asyncio.Queue[list[int] | None] = asyncio.Queue(slots)

        async def produce() -> None:
            chunk: list[int] = []
            for x in range(n):
                chunk.append(x)
                if len(chunk) == size:
                    await queue.put(chunk)
                    chunk = []
            if chunk:
                await queue.put(chunk)
            await queue.put(None)

        producer = asyncio.create_task(produce())
        total = 0
        while (chunk := await queue.get()) is not None:
            for x in chunk:
                total += x
        await producer
        return total

    return run


# -- peers --------------------------------------------------------------------------------------


async def asyncio_queue(n: int) -> object:
    queue: asyncio.Queue[int | None] = asyncio.Queue(BUFFER)

    async def produce() -> None:
        for x in range(n):
            await queue.put(x)
        await queue.put(None)

    producer = asyncio.create_task(produce())
    total = 0
    while (x := await queue.get()) is not None:
        total += x
    await producer
    return total


async def anyio_sum(receive: MemoryObjectReceiveStream[int]) -> int:
    """Sum what *receive* delivers, the fast way: ``receive_nowait`` while items are buffered,
    an awaited ``receive()`` (a checkpoint) only when the buffer is empty."""
    from anyio import EndOfStream, WouldBlock

    total = 0
    async with receive:
        while True:
            try:
                x = receive.receive_nowait()
            except WouldBlock:
                try:
                    x = await receive.receive()
                except EndOfStream:
                    return total
            except EndOfStream:
                return total
            total += x


async def anyio_stream(n: int) -> object:
    import anyio
    from anyio import WouldBlock

    # send()/receive() are checkpoints (a yield to the loop on every item); the *_nowait forms
    # do the same hand-off and wait only when the buffer is full or empty.
    async def produce(send: MemoryObjectSendStream[int]) -> None:
        async with send:
            for x in range(n):
                try:
                    send.send_nowait(x)
                except WouldBlock:
                    await send.send(x)

    send, receive = anyio.create_memory_object_stream[int](BUFFER)
    async with anyio.create_task_group() as tg:
        tg.start_soon(produce, send)
        total = await anyio_sum(receive)
    return total


async def streamz_buffer(n: int) -> object:
    from streamz import Stream

    done = asyncio.Event()
    total = count = 0

    def consume(x: int) -> None:
        nonlocal total, count
        total += x
        count += 1
        if count == n:
            done.set()

    source = Stream(asynchronous=True)
    sink = source.buffer(BUFFER).sink(consume)
    try:
        for x in range(n):
            await source.emit(x)
        if n:
            await done.wait()
    finally:
        sink.destroy()  # sinks register themselves globally
    return total


async def reactivex_to_queue(n: int) -> object:
    import reactivex

    # reactivex has no async subscriber; its fastest bridge to a consumer task is a queue fed
    # from on_next. The observable does not wait for the consumer: the queue takes everything.
    queue: asyncio.Queue[int | None] = asyncio.Queue()
    reactivex.from_iterable(range(n)).subscribe(
        on_next=queue.put_nowait, on_completed=lambda: queue.put_nowait(None)
    )
    total = 0
    while (x := await queue.get()) is not None:
        total += x
    return total


async def aioreactive_to_queue(n: int) -> object:
    import aioreactive as rx

    # The source awaits each asend, so a bounded queue behind it is a bounded hand-off.
    queue: asyncio.Queue[int | None] = asyncio.Queue(BUFFER)

    async def aclose() -> None:
        await queue.put(None)

    observer = rx.AsyncAnonymousObserver(queue.put, aclose=aclose)
    async with await rx.from_iterable(range(n)).subscribe_async(observer):
        total = 0
        while (x := await queue.get()) is not None:
            total += x
    return total


ASYNC_FOR = "reactive_aio async for"
BATCHES = "reactive_aio async for, batch(256)"
QUEUE = "asyncio.Queue(256)"
LISTS_64 = "Queue(4) of 64-item lists"
LISTS_256 = "Queue(1) of 256-item lists"

WORKLOADS = (
    Workload(
        key="W2",
        name="boundary",
        title="producer task → 256-slot buffer → consumer task",
        description="Hand-off cost between two tasks through a bounded buffer.",
        metric="items/s",
        expected=expected,
        n=1_000_000,
        quick_n=5_000,
        variants=(
            Variant(
                ASYNC_FOR,
                reactive_aio_async_for,
                role="subject",
                needs=("reactive_aio.Flux.publish_on", "reactive_aio.Flux.__aiter__"),
                note="`async for x in Flux.range(0, n).publish_on(buffer_size=256)`",
            ),
            Variant(
                BATCHES,
                reactive_aio_batches,
                role="subject",
                needs=("reactive_aio.Flux.publish_on", "reactive_aio.Flux.batch"),
                note="`async for chunk in Flux.range(0, n).publish_on(buffer_size=256)"
                ".batch(256)`, the consumer iterating each list",
            ),
            Variant(
                "reactive_aio subscribe",
                reactive_aio_subscriber,
                role="subject",
                needs=("reactive_aio.Flux.range", "reactive_aio.Flux.publish_on"),
                note="`Flux.range(0, n).publish_on(buffer_size=256).subscribe(on_next=...)`",
            ),
            Variant(
                "reactive_aio reduce",
                reactive_aio_reduce,
                role="subject",
                needs=("reactive_aio.Flux.publish_on", "reactive_aio.Flux.reduce"),
                note="`await Flux.range(0, n).publish_on(buffer_size=256).reduce(add, 0)`",
            ),
            Variant(
                "plain generator", plain_generator, role="floor", note="no boundary: same task"
            ),
            Variant(
                "async generator", async_generator, role="floor", note="no boundary: same task"
            ),
            Variant(
                LISTS_64,
                _queue_of_lists(4, 64),
                role="floor",
                note="producer task appends to a list and `await queue.put(chunk)` every 64 "
                "items into `Queue(4)`; consumer iterates the lists: the same 256-item bound",
            ),
            Variant(
                LISTS_256,
                _queue_of_lists(1, 256),
                role="floor",
                note="the same with 256-item lists in a `Queue(1)`",
            ),
            Variant(
                QUEUE,
                asyncio_queue,
                note="producer task `await queue.put(x)`, consumer `await queue.get()`",
            ),
            Variant(
                "anyio memory stream (nowait)",
                anyio_stream,
                needs=("anyio",),
                note="`create_memory_object_stream(256)` in a task group; `send_nowait` and "
                "`receive_nowait`, awaiting only on `WouldBlock`: bounded, but no checkpoint "
                "per item (`await send()` / `receive()` yield to the loop on every item)",
            ),
            Variant(
                "streamz buffer",
                streamz_buffer,
                needs=("streamz",),
                note="`Stream(asynchronous=True).buffer(256).sink`, `await emit()`",
            ),
            Variant(
                "reactivex from_iterable → Queue",
                reactivex_to_queue,
                needs=("reactivex",),
                note="`from_iterable(range(n)).subscribe(on_next=queue.put_nowait)`, consumer "
                "`await queue.get()`; no bound and no producer task: the whole source is in "
                "the queue before the consumer runs",
            ),
            Variant(
                "aioreactive observer → Queue(256)",
                aioreactive_to_queue,
                needs=("aioreactive",),
                note="`from_iterable(range(n))` into `AsyncAnonymousObserver(queue.put)`; the "
                "source awaits each `asend`, so the queue bounds it",
            ),
        ),
        goals=(
            Goal(
                "W2 `async for x in Flux.range(n).publish_on()` vs producer task → "
                "asyncio.Queue(256) → consumer",
                ASYNC_FOR,
                QUEUE,
                "speed",
                2.0,
                0.82,
            ),
            Goal(
                "W2 `async for x in Flux.range(n).publish_on()` vs a Queue(4) of 64-item lists "
                "(the floor)",
                ASYNC_FOR,
                LISTS_64,
                "speed",
                0.60,
                0.46,
            ),
            Goal(
                "W2 `async for chunk in ….publish_on().batch(256)` vs a Queue(1) of 256-item "
                "lists (the floor)",
                BATCHES,
                LISTS_256,
                "speed",
                1.0,
            ),
        ),
    ),
)


if __name__ == "__main__":
    raise SystemExit(standalone(WORKLOADS, sys.argv[1:]))
