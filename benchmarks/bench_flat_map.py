"""W5 flat_map: each outer item becomes an inner stream of 10 items, at most 4 inner streams at once.

The metric is per *inner* item (``n`` outer items give ``10 n``). Every variant sums the inner
items, so ordering does not matter. reactive_aio is measured consumed by ``reduce`` and by
``async for``. Peers use their own concurrency-limited flattening where they have it (aiostream
``flatmap(task_limit=4)`` over async generators, reactivex ``merge(max_concurrent=4)`` over
``from_iterable``, aioreactive ``merge_inner(4)``); the asyncio variant is 4 worker tasks and an
output queue. streamz's ``flatten`` has no concurrency and runs synchronously.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the `benchmarks` package importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._harness import Goal, Variant, Workload
from benchmarks._standalone import standalone

INNER = 10
CONCURRENCY = 4
BUFFER = 256


def expected(n: int) -> int:
    """Inner streams cover ``range(10 n)`` exactly once."""
    total = n * INNER
    return total * (total - 1) // 2


def _add(acc: int, x: int) -> int:
    return acc + x


# -- reactive_aio -------------------------------------------------------------------------------


async def reactive_aio_flat_map(n: int) -> object:
    from reactive_aio import Flux

    return await (
        Flux.range(0, n)
        .flat_map(lambda i: Flux.range(i * INNER, INNER), concurrency=CONCURRENCY)
        .reduce(_add, 0)
    )


async def reactive_aio_async_for(n: int) -> object:
    from reactive_aio import Flux

    total = 0
    async for x in Flux.range(0, n).flat_map(
        lambda i: Flux.range(i * INNER, INNER), concurrency=CONCURRENCY
    ):
        total += x
    return total


# -- floors: sequential nesting (concurrency 1) -------------------------------------------------


def _inner(i: int) -> Iterator[int]:
    yield from range(i * INNER, (i + 1) * INNER)


async def plain_generators(n: int) -> object:
    total = 0
    for i in range(n):
        for x in _inner(i):
            total += x
    return total


async def _ainner(i: int) -> AsyncIterator[int]:
    for x in range(i * INNER, (i + 1) * INNER):
        yield x


async def _aouter(n: int) -> AsyncIterator[int]:
    for i in range(n):
        async for x in _ainner(i):
            yield x


async def async_generators(n: int) -> object:
    total = 0
    async for x in _aouter(n):
        total += x
    return total


# -- peers --------------------------------------------------------------------------------------


async def _arange(n: int) -> AsyncIterator[int]:
    for i in range(n):
        yield i


async def aiostream_flatmap(n: int) -> object:
    from aiostream import pipe, stream

    # aiostream types the function as also taking *args (for zipping several sources).
    flat = pipe.flatmap(_ainner, task_limit=CONCURRENCY)  # type: ignore[arg-type]
    xs = stream.iterate(_arange(n)) | flat | pipe.reduce(_add, 0)
    return await xs


async def asyncio_workers(n: int) -> object:
    todo: asyncio.Queue[int | None] = asyncio.Queue(CONCURRENCY)
    out: asyncio.Queue[int] = asyncio.Queue(BUFFER)

    async def feed() -> None:
        for i in range(n):
            await todo.put(i)
        for _ in range(CONCURRENCY):
            await todo.put(None)

    async def work() -> None:
        while (i := await todo.get()) is not None:
            async for x in _ainner(i):
                await out.put(x)

    tasks = [asyncio.create_task(feed())]
    tasks += [asyncio.create_task(work()) for _ in range(CONCURRENCY)]
    total = 0
    for _ in range(n * INNER):
        total += await out.get()
    await asyncio.gather(*tasks)
    return total


async def reactivex_merge(n: int) -> object:
    import reactivex
    from reactivex import operators as ops

    def inner(i: int) -> reactivex.Observable[int]:
        return reactivex.from_iterable(range(i * INNER, (i + 1) * INNER))

    results: list[int] = []
    reactivex.from_iterable(range(n)).pipe(
        ops.map(inner),
        ops.merge(max_concurrent=CONCURRENCY),
        ops.reduce(_add, 0),
    ).subscribe(on_next=results.append)
    return results[-1]


async def aioreactive_merge_inner(n: int) -> object:
    import aioreactive as rx
    from expression import pipe

    def inner(i: int) -> rx.AsyncObservable[int]:
        return rx.from_iterable(range(i * INNER, (i + 1) * INNER))

    xs = pipe(
        rx.from_iterable(range(n)),
        rx.map(inner),
        rx.merge_inner(CONCURRENCY),
        rx.reduce(_add, 0),
    )
    return await rx.run(xs, timeout=3600)


async def streamz_flatten(n: int) -> object:
    from streamz import Stream

    source = Stream()
    last = 0

    def keep(total: int) -> None:
        nonlocal last
        last = total

    sink = source.map(_inner).flatten().accumulate(_add, start=0).sink(keep)
    for i in range(n):
        source.emit(i)
    sink.destroy()  # sinks register themselves globally
    return last


REDUCE = "reactive_aio flat_map reduce"
TASKS = "asyncio tasks"

WORKLOADS = (
    Workload(
        key="W5",
        name="flat_map",
        title="each item → 10-item inner stream, concurrency 4 (per inner item)",
        description="Cost of subscribing to, merging and completing many small inner streams.",
        metric="ns/item",
        expected=expected,
        n=100_000,
        quick_n=500,
        items_per_n=INNER,
        variants=(
            Variant(
                REDUCE,
                reactive_aio_flat_map,
                role="subject",
                needs=("reactive_aio.Flux.flat_map", "reactive_aio.Flux.reduce"),
                note="`Flux.range(0, n).flat_map(lambda i: Flux.range(...), concurrency=4)"
                ".reduce(add, 0)`",
            ),
            Variant(
                "reactive_aio flat_map async for",
                reactive_aio_async_for,
                role="subject",
                needs=("reactive_aio.Flux.flat_map", "reactive_aio.Flux.__aiter__"),
                note="`async for` over the same `flat_map`",
            ),
            Variant("plain generators", plain_generators, role="floor", note="nested, sequential"),
            Variant("async generators", async_generators, role="floor", note="nested, sequential"),
            Variant(
                "aiostream flatmap(async gen)",
                aiostream_flatmap,
                needs=("aiostream",),
                note="`stream.iterate(async_gen) | pipe.flatmap(async_gen_fn, task_limit=4)`; "
                "`stream.range` would sleep(0) before every item",
            ),
            Variant(
                TASKS,
                asyncio_workers,
                note="4 worker tasks, each `async for` over an async generator → `Queue(256)` → "
                "consumer",
            ),
            Variant(
                "reactivex from_iterable merge",
                reactivex_merge,
                needs=("reactivex",),
                note="`from_iterable(range(n)).pipe(ops.map(inner), ops.merge(max_concurrent=4))`, "
                "inner `from_iterable`; synchronous, no demand: each inner stream completes "
                "while it is subscribed, so the limit never holds one back",
            ),
            Variant(
                "aioreactive merge_inner",
                aioreactive_merge_inner,
                needs=("aioreactive",),
                note="`rx.map(inner), rx.merge_inner(4)` over `from_iterable`",
            ),
            Variant(
                "streamz flatten",
                streamz_flatten,
                needs=("streamz",),
                note="`map(inner).flatten()`: synchronous, no concurrency, no demand",
            ),
        ),
        goals=(
            Goal(
                "W5 flat_map, 10-item inners, concurrency 4, vs the asyncio tasks variant",
                REDUCE,
                TASKS,
                "cost",
                0.5,
                1.0,
            ),
        ),
    ),
)


if __name__ == "__main__":
    raise SystemExit(standalone(WORKLOADS, sys.argv[1:]))
