"""W7, W8 ``map_async``: awaiting a coroutine function per item, against the loops an expert
writes by hand for the same job.

- W7 (concurrency 1): ``Flux.range(0, n).map_async(fn).reduce(add, 0)`` with a coroutine that
  finishes without suspending (W7a) and one that suspends once, ``await asyncio.sleep(0)``
  (W7b). The floor is one loop awaiting ``fn(x)`` inline; a chain of async generators awaiting
  it is the idiomatic second row.
- W8 (concurrency 8): a coroutine that sleeps 1 ms, results in order and unordered. The floor is
  8 worker tasks taking items from a queue and handing results back (restoring order, for the
  ordered form, by index); the ratios compare CPU time (the work spent around the sleeps) and
  wall time (the throughput the concurrency buys).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the `benchmarks` package importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._harness import Goal, Variant, Workload
from benchmarks._standalone import standalone

Work = Callable[[int], Awaitable[int]]
Runner = Callable[[int], Coroutine[Any, Any, int]]

CONCURRENCY = 8


async def _ready(x: int) -> int:
    return x


async def _yield_once(x: int) -> int:
    await asyncio.sleep(0)
    return x


async def _sleep_1ms(x: int) -> int:
    await asyncio.sleep(0.001)
    return x


def _add(acc: int, x: int) -> int:
    return acc + x


def expected(n: int) -> int:
    """Every variant sums what ``fn`` returns: the items themselves."""
    return n * (n - 1) // 2


# -- reactive_aio -------------------------------------------------------------------------------


def _flux(fn: Work, concurrency: int = 1, ordered: bool = True) -> Runner:
    async def run(n: int) -> int:
        from reactive_aio import Flux

        chain = Flux.range(0, n).map_async(fn, concurrency=concurrency, ordered=ordered)
        return await chain.reduce(_add, 0)

    return run


# -- floors -------------------------------------------------------------------------------------


def _inline(fn: Work) -> Runner:
    async def run(n: int) -> int:
        total = 0
        for x in range(n):
            total = _add(total, await fn(x))
        return total

    return run


async def _agen_range(n: int) -> AsyncIterator[int]:
    for x in range(n):
        yield x


async def _agen_await(fn: Work, source: AsyncIterator[int]) -> AsyncIterator[int]:
    async for x in source:
        yield await fn(x)


def _generators(fn: Work) -> Runner:
    async def run(n: int) -> int:
        total = 0
        async for y in _agen_await(fn, _agen_range(n)):
            total = _add(total, y)
        return total

    return run


def _workers(fn: Work, ordered: bool) -> Runner:
    """`CONCURRENCY` tasks over a bounded queue of items; results come back on a queue and, for
    the ordered form, are released in item order from a dict of early arrivals."""

    async def run(n: int) -> int:
        items: asyncio.Queue[tuple[int, int] | None] = asyncio.Queue(CONCURRENCY)
        results: asyncio.Queue[tuple[int, int]] = asyncio.Queue()

        async def work() -> None:
            while (job := await items.get()) is not None:
                index, x = job
                results.put_nowait((index, await fn(x)))

        async def feed() -> None:
            for index in range(n):
                await items.put((index, index))
            for _ in range(CONCURRENCY):
                await items.put(None)

        tasks = [asyncio.create_task(work()) for _ in range(CONCURRENCY)]
        feeder = asyncio.create_task(feed())
        total = 0
        if ordered:
            early: dict[int, int] = {}
            for index in range(n):
                while index not in early:
                    done, value = await results.get()
                    early[done] = value
                total = _add(total, early.pop(index))
        else:
            for _ in range(n):
                total = _add(total, (await results.get())[1])
        await feeder
        await asyncio.gather(*tasks)
        return total

    return run


FLUX = "reactive_aio map_async"
INLINE = "one loop awaiting inline"


def _sequential(key: str, title: str, fn: Work, was: float | None) -> Workload:
    return Workload(
        key=key,
        name=f"map_async_{fn.__name__.strip('_')}",
        title=title,
        description="Per-item cost of awaiting a coroutine function per item, one at a time.",
        metric="ns/item",
        expected=expected,
        n=200_000,
        quick_n=2_000,
        variants=(
            Variant(
                FLUX,
                _flux(fn),
                role="subject",
                needs=("reactive_aio.Flux.map_async",),
                note="`await Flux.range(0, n).map_async(fn).reduce(add, 0)` (concurrency 1)",
            ),
            Variant(
                INLINE,
                _inline(fn),
                role="floor",
                note="`for x in range(n): total = add(total, await fn(x))`",
            ),
            Variant(
                "async generators",
                _generators(fn),
                role="floor",
                note="an async generator source and one awaiting `fn(x)`, with `async for`",
            ),
        ),
        goals=(
            Goal(
                f"{key} `map_async` (concurrency 1), {title.split(', ', 1)[1]}, vs one loop "
                "awaiting it inline (the floor)",
                FLUX,
                INLINE,
                "cost",
                2.0 if fn is _ready else 1.3,
                was,
            ),
        ),
    )


ORDERED = f"reactive_aio map_async(concurrency={CONCURRENCY})"
UNORDERED = f"reactive_aio map_async(concurrency={CONCURRENCY}, ordered=False)"
WORKERS = f"{CONCURRENCY} workers over a queue, order restored"
WORKERS_UNORDERED = f"{CONCURRENCY} workers over a queue"


def _goals(subject: str, floor: str, what: str) -> tuple[Goal, ...]:
    text = f"W8 `map_async` ({what}), 1 ms coroutines, vs {floor} (the floor)"
    return (
        Goal(f"{text}: CPU", subject, floor, "cost", 1.0, clock="cpu"),
        Goal(f"{text}: throughput", subject, floor, "speed", 0.95, clock="wall"),
    )


WORKLOADS = (
    _sequential("W7a", "map_async, a coroutine that does not suspend", _ready, 18.0),
    _sequential("W7b", "map_async, a coroutine that suspends once", _yield_once, None),
    Workload(
        key="W8",
        name="map_async_concurrent",
        title=f"map_async, concurrency {CONCURRENCY}, coroutines sleeping 1 ms",
        description=(
            f"{CONCURRENCY} calls at once of a coroutine that sleeps 1 ms; CPU spent around the "
            "sleeps, and throughput."
        ),
        metric="ns/item",
        expected=expected,
        n=8_000,
        quick_n=400,
        fixed_n=True,  # the wall time is the sleeps: a smaller n measures the same thing
        variants=(
            Variant(
                ORDERED,
                _flux(_sleep_1ms, CONCURRENCY),
                role="subject",
                needs=("reactive_aio.Flux.map_async",),
                note=f"`map_async(fn, concurrency={CONCURRENCY})`, results in item order",
                versus=(WORKERS,),
            ),
            Variant(
                UNORDERED,
                _flux(_sleep_1ms, CONCURRENCY, ordered=False),
                role="subject",
                needs=("reactive_aio.Flux.map_async",),
                note="the same, results as they finish",
                versus=(WORKERS_UNORDERED,),
            ),
            Variant(
                WORKERS,
                _workers(_sleep_1ms, ordered=True),
                role="floor",
                note=f"{CONCURRENCY} tasks over `Queue({CONCURRENCY})` of items, results on a "
                "queue, released in order from a dict of early arrivals",
            ),
            Variant(
                WORKERS_UNORDERED,
                _workers(_sleep_1ms, ordered=False),
                role="floor",
                note="the same, results summed as they arrive",
            ),
        ),
        goals=(
            *_goals(ORDERED, WORKERS, "ordered"),
            *_goals(UNORDERED, WORKERS_UNORDERED, "unordered"),
        ),
    ),
)


if __name__ == "__main__":
    raise SystemExit(standalone(WORKLOADS, sys.argv[1:]))
