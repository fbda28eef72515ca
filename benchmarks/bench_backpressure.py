"""W3 backpressure: a fast producer of 1 KiB items against a slow consumer, peak memory by N.

The producer makes a fresh ``bytes(1024)`` per item as fast as it is allowed to; the consumer
yields to the event loop after every item, so it is always the slower side. With backpressure the
peak resident set stays flat as N grows (the buffer bounds it); without, every item the consumer
has not reached yet is held in memory, and the peak grows linearly with N.

Each point runs in its own child process (see ``benchmarks/_child.py``); the figure is the peak
resident set above the baseline taken after a small warm-up.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the `benchmarks` package importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._harness import Variant, Workload
from benchmarks._standalone import standalone

BUFFER = 256
ITEM_SIZE = 1024


def expected(n: int) -> int:
    """Bytes the consumer saw."""
    return n * ITEM_SIZE


def _payloads(n: int) -> Iterator[bytes]:
    for _ in range(n):
        yield bytes(ITEM_SIZE)


async def _slow_consume(item: bytes) -> int:
    await asyncio.sleep(0)
    return len(item)


# -- reactive_aio -------------------------------------------------------------------------------


async def reactive_aio_publish_on(n: int) -> object:
    from reactive_aio import Flux

    seen = 0
    async for item in Flux.from_iterable(_payloads(n)).publish_on(buffer_size=BUFFER):
        seen += await _slow_consume(item)
    return seen


# -- floor --------------------------------------------------------------------------------------


async def _agen_payloads(n: int) -> AsyncIterator[bytes]:
    for item in _payloads(n):
        yield item


async def async_generator(n: int) -> object:
    seen = 0
    async for item in _agen_payloads(n):
        seen += await _slow_consume(item)
    return seen


# -- peers --------------------------------------------------------------------------------------


async def asyncio_queue(n: int) -> object:
    queue: asyncio.Queue[bytes | None] = asyncio.Queue(BUFFER)

    async def produce() -> None:
        for item in _payloads(n):
            await queue.put(item)
        await queue.put(None)

    producer = asyncio.create_task(produce())
    seen = 0
    while (item := await queue.get()) is not None:
        seen += await _slow_consume(item)
    await producer
    return seen


async def anyio_stream(n: int) -> object:
    import anyio
    from anyio.abc import ObjectSendStream

    async def produce(send: ObjectSendStream[bytes]) -> None:
        async with send:
            for item in _payloads(n):
                await send.send(item)

    send, receive = anyio.create_memory_object_stream[bytes](BUFFER)
    seen = 0
    async with anyio.create_task_group() as tg:
        tg.start_soon(produce, send)
        async with receive:
            async for item in receive:
                seen += await _slow_consume(item)
    return seen


async def aiostream_iterate(n: int) -> object:
    from aiostream import stream

    seen = 0
    async with stream.iterate(_agen_payloads(n)).stream() as streamer:
        async for item in streamer:
            seen += await _slow_consume(item)
    return seen


async def reactivex_to_queue(n: int) -> object:
    import reactivex

    # reactivex has no async subscriber: the usual bridge to an async consumer is a queue fed
    # from on_next. The observable does not wait for the consumer, so the queue is unbounded.
    queue: asyncio.Queue[bytes | None] = asyncio.Queue()
    reactivex.from_iterable(_payloads(n)).subscribe(
        on_next=queue.put_nowait, on_completed=lambda: queue.put_nowait(None)
    )
    seen = 0
    while (item := await queue.get()) is not None:
        seen += await _slow_consume(item)
    return seen


async def streamz_async_sink(n: int) -> object:
    from streamz import Stream
    from tornado.ioloop import IOLoop

    done = asyncio.Event()
    seen = count = 0

    async def consume(item: bytes) -> None:
        nonlocal seen, count
        seen += await _slow_consume(item)
        count += 1
        if count == n:
            done.set()

    # A source given only asynchronous=True starts its own IOLoop in a thread; passing the current
    # loop keeps it on ours. Sinks register themselves globally, so destroy() releases this one.
    source = Stream.from_iterable(_payloads(n), asynchronous=True, loop=IOLoop.current())
    sink = source.sink(consume)
    source.start()
    try:
        if n:
            await done.wait()
    finally:
        sink.destroy()
    return seen


async def aioreactive_observer(n: int) -> object:
    import aioreactive as rx

    seen = 0

    async def asend(item: bytes) -> None:
        nonlocal seen
        seen += await _slow_consume(item)

    done = asyncio.Event()

    async def aclose() -> None:
        done.set()

    async with await rx.from_iterable(_payloads(n)).subscribe_async(
        rx.AsyncAnonymousObserver(asend, aclose=aclose)
    ):
        await done.wait()
    return seen


WORKLOADS = (
    Workload(
        key="W3",
        name="backpressure",
        title="fast producer of 1 KiB items → slow consumer: peak RSS growth",
        description="The consumer yields to the loop after every item, so it is the slow side.",
        metric="MiB",
        kind="rss",
        expected=expected,
        sizes=(50_000, 100_000, 200_000, 400_000),
        quick_sizes=(2_000,),
        variants=(
            Variant(
                "reactive_aio",
                reactive_aio_publish_on,
                role="subject",
                needs=(
                    "reactive_aio.Flux.from_iterable",
                    "reactive_aio.Flux.publish_on",
                    "reactive_aio.Flux.__aiter__",
                ),
                note="async for over Flux.from_iterable(...).publish_on(buffer_size=256)",
            ),
            Variant("async generator", async_generator, role="floor", note="pull, one item"),
            Variant("asyncio.Queue", asyncio_queue, note="Queue(256), producer task"),
            Variant(
                "anyio",
                anyio_stream,
                needs=("anyio",),
                note="create_memory_object_stream(256) in a task group",
            ),
            Variant(
                "aiostream",
                aiostream_iterate,
                needs=("aiostream",),
                note="stream.iterate over an async generator, pulled by the consumer",
            ),
            Variant(
                "reactivex",
                reactivex_to_queue,
                needs=("reactivex",),
                note="from_iterable → on_next=queue.put_nowait (no backpressure)",
            ),
            Variant(
                "streamz",
                streamz_async_sink,
                needs=("streamz",),
                note="Stream.from_iterable(asynchronous=True).sink(async fn)",
            ),
            Variant(
                "aioreactive",
                aioreactive_observer,
                needs=("aioreactive",),
                note="from_iterable → AsyncAnonymousObserver(async asend)",
            ),
        ),
    ),
)


if __name__ == "__main__":
    raise SystemExit(standalone(WORKLOADS, sys.argv[1:]))
