"""W4 multicast: one source delivered to 4 subscribers, each of which sums what it gets.

The metric is per *source* item, so each item's figure covers four deliveries. reactive_aio uses a
`MulticastProcessor` (all four subscribe, then the source is connected), consumed by subscribers
and by four ``async for`` tasks, and ``publish().auto_connect(4)``; not ``share()``, which starts
the source at the first subscriber, so with a synchronous source the other three would miss the
first items. The peers use their own multicast where they have one (a reactivex ``Subject``
subscribed to ``from_iterable``, a streamz node with four downstream branches, an aioreactive
``AsyncSubject``); asyncio and anyio get four bounded queues fed by hand from one producer task.
aiostream has no multicast operator.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING

if __package__ in (None, ""):  # run as a script: make the `benchmarks` package importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._harness import Goal, Variant, Workload
from benchmarks._standalone import standalone

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectReceiveStream

FAN_OUT = 4
BUFFER = 256


def expected(n: int) -> tuple[int, ...]:
    """Every subscriber sums the whole of ``range(n)``."""
    return (n * (n - 1) // 2,) * FAN_OUT


class _Totals:
    """Four running sums and a future that resolves when all four subscribers completed."""

    __slots__ = ("done", "pending", "sums")

    def __init__(self) -> None:
        self.sums = [0] * FAN_OUT
        self.pending = FAN_OUT
        self.done: asyncio.Future[tuple[int, ...]] = asyncio.get_running_loop().create_future()

    def adder(self, index: int) -> Callable[[int], None]:
        sums = self.sums

        def on_next(x: int) -> None:
            sums[index] += x

        return on_next

    def complete(self) -> None:
        self.pending -= 1
        if self.pending == 0 and not self.done.done():
            self.done.set_result(tuple(self.sums))

    def fail(self, error: BaseException) -> None:
        if not self.done.done():
            self.done.set_exception(error)


# -- reactive_aio -------------------------------------------------------------------------------


async def reactive_aio_processor(n: int) -> object:
    from reactive_aio import Flux, MulticastProcessor

    totals = _Totals()
    processor = MulticastProcessor[int](buffer_size=BUFFER)
    for index in range(FAN_OUT):
        Flux.from_publisher(processor).subscribe(
            on_next=totals.adder(index), on_error=totals.fail, on_complete=totals.complete
        )
    Flux.range(0, n).subscribe(processor)
    return await totals.done


async def reactive_aio_async_for(n: int) -> object:
    from reactive_aio import Flux, MulticastProcessor

    processor = MulticastProcessor[int](buffer_size=BUFFER)

    async def consume(items: AsyncIterator[int]) -> int:
        total = 0
        async for x in items:
            total += x
        return total

    # aiter() subscribes at once, so all four are subscribed before the source is connected.
    consumers = [
        asyncio.create_task(consume(aiter(Flux.from_publisher(processor)))) for _ in range(FAN_OUT)
    ]
    Flux.range(0, n).subscribe(processor)
    return tuple(await asyncio.gather(*consumers))


async def reactive_aio_auto_connect(n: int) -> object:
    from reactive_aio import Flux

    totals = _Totals()
    # share() (= publish().ref_count(1)) connects at the first subscriber, and a synchronous
    # source then hands its first items to that subscriber alone; auto_connect(4) waits for all.
    shared = Flux.range(0, n).publish(buffer_size=BUFFER).auto_connect(FAN_OUT)
    for index in range(FAN_OUT):
        shared.subscribe(
            on_next=totals.adder(index), on_error=totals.fail, on_complete=totals.complete
        )
    return await totals.done


# -- floors -------------------------------------------------------------------------------------


async def plain_generator(n: int) -> object:
    sums = [0] * FAN_OUT
    for x in iter(range(n)):
        for index in range(FAN_OUT):
            sums[index] += x
    return tuple(sums)


async def _agen_range(n: int) -> AsyncIterator[int]:
    for x in range(n):
        yield x


async def async_generator(n: int) -> object:
    sums = [0] * FAN_OUT
    async for x in _agen_range(n):
        for index in range(FAN_OUT):
            sums[index] += x
    return tuple(sums)


# -- peers --------------------------------------------------------------------------------------


async def asyncio_queues(n: int) -> object:
    queues: list[asyncio.Queue[int | None]] = [asyncio.Queue(BUFFER) for _ in range(FAN_OUT)]

    async def produce() -> None:
        for x in range(n):
            for queue in queues:
                await queue.put(x)
        for queue in queues:
            await queue.put(None)

    async def consume(queue: asyncio.Queue[int | None]) -> int:
        total = 0
        while (x := await queue.get()) is not None:
            total += x
        return total

    consumers = [asyncio.create_task(consume(queue)) for queue in queues]
    await produce()
    return tuple(await asyncio.gather(*consumers))


async def anyio_streams(n: int) -> object:
    import anyio
    from anyio import WouldBlock

    from benchmarks.bench_boundary import anyio_sum

    pairs = [anyio.create_memory_object_stream[int](BUFFER) for _ in range(FAN_OUT)]
    sums = [0] * FAN_OUT

    async def consume(index: int, receive: MemoryObjectReceiveStream[int]) -> None:
        sums[index] = await anyio_sum(receive)

    # The *_nowait forms, awaiting only when a buffer is full or empty (see W2).
    async with anyio.create_task_group() as tg:
        for index, (_, receive) in enumerate(pairs):
            tg.start_soon(consume, index, receive)
        sends = [send for send, _ in pairs]
        for x in range(n):
            for send in sends:
                try:
                    send.send_nowait(x)
                except WouldBlock:
                    await send.send(x)
        for send in sends:
            await send.aclose()
    return tuple(sums)


async def reactivex_subject(n: int) -> object:
    import reactivex
    from reactivex.subject import Subject

    totals = _Totals()
    subject: Subject[int] = Subject()
    for index in range(FAN_OUT):
        subject.subscribe(
            on_next=totals.adder(index), on_error=totals.fail, on_completed=totals.complete
        )
    reactivex.from_iterable(range(n)).subscribe(subject)
    return await totals.done


async def streamz_branches(n: int) -> object:
    from streamz import Stream

    source = Stream()
    sums = [0] * FAN_OUT
    sinks = []
    for index in range(FAN_OUT):

        def add(x: int, index: int = index) -> None:
            sums[index] += x

        sinks.append(source.sink(add))
    for x in range(n):
        source.emit(x)
    for sink in sinks:
        sink.destroy()  # sinks register themselves globally
    return tuple(sums)


async def aioreactive_subject(n: int) -> object:
    import aioreactive as rx

    subject: rx.AsyncSubject[int] = rx.AsyncSubject()
    sums = [0] * FAN_OUT
    for index in range(FAN_OUT):

        async def asend(x: int, index: int = index) -> None:
            sums[index] += x

        await subject.subscribe_async(rx.AsyncAnonymousObserver(asend))
    for x in range(n):
        await subject.asend(x)
    await subject.aclose()
    return tuple(sums)


PROCESSOR = "reactive_aio MulticastProcessor"
SUBJECT = "reactivex Subject"

WORKLOADS = (
    Workload(
        key="W4",
        name="multicast",
        title="one source → 4 subscribers (per source item)",
        description="Fan-out cost: every item is delivered to four subscribers.",
        metric="ns/item",
        expected=expected,
        n=500_000,
        quick_n=2_000,
        variants=(
            Variant(
                PROCESSOR,
                reactive_aio_processor,
                role="subject",
                needs=("reactive_aio.MulticastProcessor", "reactive_aio.Flux.from_publisher"),
                note="`MulticastProcessor(buffer_size=256)`, 4 `Flux.from_publisher(p)"
                ".subscribe(...)`, then `Flux.range(0, n).subscribe(p)`",
            ),
            Variant(
                "reactive_aio MulticastProcessor, 4 async for",
                reactive_aio_async_for,
                role="subject",
                needs=("reactive_aio.MulticastProcessor", "reactive_aio.Flux.__aiter__"),
                note="the same processor read by 4 tasks, each `async for` over "
                "`Flux.from_publisher(p)`",
            ),
            Variant(
                "reactive_aio publish().auto_connect(4)",
                reactive_aio_auto_connect,
                role="subject",
                needs=("reactive_aio.Flux.publish",),
                note="`flux.publish(buffer_size=256).auto_connect(4)`, then 4 `subscribe(...)`",
            ),
            Variant("plain generator", plain_generator, role="floor", note="one loop, 4 sums"),
            Variant("async generator", async_generator, role="floor", note="one loop, 4 sums"),
            Variant(
                "4 asyncio.Queue(256)",
                asyncio_queues,
                note="a producer task feeds 4 queues by hand, `await put` / `await get`",
            ),
            Variant(
                "4 anyio memory streams (nowait)",
                anyio_streams,
                needs=("anyio",),
                note="a producer feeds 4 memory object streams (256) by hand, `*_nowait` with "
                "an await on `WouldBlock` only (no checkpoint per item)",
            ),
            Variant(
                SUBJECT,
                reactivex_subject,
                needs=("reactivex",),
                note="`Subject()`, 4 `subscribe`, `from_iterable(range(n)).subscribe(subject)`; "
                "no demand and no bound: a slow subscriber cannot slow the source",
            ),
            Variant(
                "streamz branches",
                streamz_branches,
                needs=("streamz",),
                note="one `Stream`, 4 `sink` branches, `emit()` per item; no demand",
            ),
            Variant(
                "aioreactive AsyncSubject",
                aioreactive_subject,
                needs=("aioreactive",),
                note="`AsyncSubject` with 4 async observers, `await asend(x)` per item",
            ),
        ),
        goals=(
            Goal(
                "W4 range → MulticastProcessor(256) → 4 subscribers vs reactivex Subject",
                PROCESSOR,
                SUBJECT,
                "cost",
                1.0,
                2.07,
            ),
        ),
    ),
)


if __name__ == "__main__":
    raise SystemExit(standalone(WORKLOADS, sys.argv[1:]))
