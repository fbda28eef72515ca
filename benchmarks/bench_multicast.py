"""W4 multicast: one source delivered to 4 subscribers, each of which sums what it gets.

The metric is per *source* item, so each item's figure covers four deliveries. reactive_aio uses a
`MulticastProcessor` (all four subscribe, then the source is connected) and
``publish().auto_connect(4)``; not ``share()``, which starts the source at the first subscriber,
so with a synchronous source the other three would miss the first items. The
peers use their own multicast where they have one (reactivex ``publish()`` + ``connect()``, a
streamz node with four downstream branches, an aioreactive ``AsyncSubject``); asyncio and anyio
get four bounded queues fed by hand from one producer task. aiostream has no multicast operator.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the `benchmarks` package importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._harness import Variant, Workload
from benchmarks._standalone import standalone

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
    from anyio.abc import ObjectReceiveStream

    pairs = [anyio.create_memory_object_stream[int](BUFFER) for _ in range(FAN_OUT)]
    sums = [0] * FAN_OUT

    async def consume(index: int, receive: ObjectReceiveStream[int]) -> None:
        async with receive:
            async for x in receive:
                sums[index] += x

    async with anyio.create_task_group() as tg:
        for index, (_, receive) in enumerate(pairs):
            tg.start_soon(consume, index, receive)
        sends = [send for send, _ in pairs]
        for x in range(n):
            for send in sends:
                await send.send(x)
        for send in sends:
            await send.aclose()
    return tuple(sums)


async def reactivex_publish(n: int) -> object:
    import reactivex
    from reactivex import operators as ops

    totals = _Totals()
    published = reactivex.range(0, n).pipe(ops.publish())
    for index in range(FAN_OUT):
        published.subscribe(
            on_next=totals.adder(index), on_error=totals.fail, on_completed=totals.complete
        )
    published.connect()
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
                "reactive_aio MulticastProcessor",
                reactive_aio_processor,
                role="subject",
                needs=("reactive_aio.MulticastProcessor", "reactive_aio.Flux.from_publisher"),
                note="4 Flux.from_publisher(p).subscribe(...), then source.subscribe(p)",
            ),
            Variant(
                "reactive_aio publish().auto_connect(4)",
                reactive_aio_auto_connect,
                role="subject",
                needs=("reactive_aio.Flux.publish",),
                note="flux.publish().auto_connect(4), then 4 subscribe(...)",
            ),
            Variant("plain generator", plain_generator, role="floor", note="one loop, 4 sums"),
            Variant("async generator", async_generator, role="floor", note="one loop, 4 sums"),
            Variant(
                "asyncio.Queue (4)", asyncio_queues, note="producer feeds 4 Queue(256) by hand"
            ),
            Variant(
                "anyio (4 streams)",
                anyio_streams,
                needs=("anyio",),
                note="producer feeds 4 memory object streams (256) by hand",
            ),
            Variant(
                "reactivex",
                reactivex_publish,
                needs=("reactivex",),
                note="ops.publish(), 4 subscribe, connect()",
            ),
            Variant(
                "streamz", streamz_branches, needs=("streamz",), note="one Stream, 4 sink branches"
            ),
            Variant(
                "aioreactive",
                aioreactive_subject,
                needs=("aioreactive",),
                note="AsyncSubject with 4 async observers",
            ),
        ),
    ),
)


if __name__ == "__main__":
    raise SystemExit(standalone(WORKLOADS, sys.argv[1:]))
