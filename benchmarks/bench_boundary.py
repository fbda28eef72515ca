"""W2 boundary: producer task → 256-slot buffer → consumer task.

The cost of handing items from one task to another through a bounded buffer: every variant has a
producer that runs ahead until the buffer is full and a consumer that sums what it receives.
Libraries without a bounded hand-off run their closest idiom and say so in their note
(reactivex's ``observe_on`` queue is unbounded; aioreactive's iterator hands over one item at a
time). aiostream is absent: its pipelines run in the consumer's task and it has no buffering
operator that would put the producer in a task of its own.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the `benchmarks` package importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._harness import Variant, Workload
from benchmarks._standalone import standalone

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


async def anyio_stream(n: int) -> object:
    import anyio
    from anyio.abc import ObjectSendStream

    async def produce(send: ObjectSendStream[int]) -> None:
        async with send:
            for x in range(n):
                await send.send(x)

    send, receive = anyio.create_memory_object_stream[int](BUFFER)
    total = 0
    async with anyio.create_task_group() as tg:
        tg.start_soon(produce, send)
        async with receive:
            async for x in receive:
                total += x
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


async def reactivex_observe_on(n: int) -> object:
    import reactivex
    from reactivex import operators as ops
    from reactivex.scheduler.eventloop import AsyncIOScheduler

    loop = asyncio.get_running_loop()
    scheduler = AsyncIOScheduler(loop)
    done: asyncio.Future[None] = loop.create_future()
    total = 0

    def on_next(x: int) -> None:
        nonlocal total
        total += x

    def on_completed() -> None:
        done.set_result(None)

    reactivex.range(0, n, scheduler=scheduler).pipe(ops.observe_on(scheduler)).subscribe(
        on_next=on_next, on_error=done.set_exception, on_completed=on_completed
    )
    await done
    return total


async def aioreactive_iterable(n: int) -> object:
    import aioreactive as rx

    total = 0
    async for x in rx.to_async_iterable(rx.from_iterable(range(n))):
        total += x
    return total


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
                "reactive_aio",
                reactive_aio_subscriber,
                role="subject",
                needs=("reactive_aio.Flux.range", "reactive_aio.Flux.publish_on"),
                note="Flux.range(0, n).publish_on(buffer_size=256).subscribe(on_next=...)",
            ),
            Variant(
                "reactive_aio async for",
                reactive_aio_async_for,
                role="subject",
                needs=("reactive_aio.Flux.publish_on", "reactive_aio.Flux.__aiter__"),
                note="async for over publish_on(buffer_size=256)",
            ),
            Variant(
                "plain generator", plain_generator, role="floor", note="no boundary: same task"
            ),
            Variant(
                "async generator", async_generator, role="floor", note="no boundary: same task"
            ),
            Variant("asyncio.Queue", asyncio_queue, note="Queue(256), producer task"),
            Variant(
                "anyio",
                anyio_stream,
                needs=("anyio",),
                note="create_memory_object_stream(256) in a task group",
            ),
            Variant(
                "streamz",
                streamz_buffer,
                needs=("streamz",),
                note="Stream(asynchronous=True).buffer(256).sink, await emit()",
            ),
            Variant(
                "reactivex",
                reactivex_observe_on,
                needs=("reactivex",),
                note="range on AsyncIOScheduler → observe_on (unbounded queue)",
            ),
            Variant(
                "aioreactive",
                aioreactive_iterable,
                needs=("aioreactive",),
                note="to_async_iterable: one-item hand-off",
            ),
        ),
    ),
)


if __name__ == "__main__":
    raise SystemExit(standalone(WORKLOADS, sys.argv[1:]))
