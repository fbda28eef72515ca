"""``map_async`` throughput: worker tasks that run through items vs one task per item.

Run: ``python -m benchmarks.bench_map_async [--n N] [--reps R]``. For each loop (asyncio,
uvloop) it prints one JSON line with the median items per second of
``Flux.range(0, N).map_async(fn, concurrency=C)`` for C in 1 and 8, and of a naive baseline
that creates one task per item (``asyncio.create_task(fn(x))`` awaited in order), where the
async function yields to the loop once per call.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Callable, Coroutine
from typing import Any

import uvloop

from reactive_aio import Flux


async def _work(x: int) -> int:
    await asyncio.sleep(0)
    return x


async def _flux(n: int, concurrency: int) -> int:
    count = 0
    async for _ in Flux.range(0, n).map_async(_work, concurrency=concurrency).iterate(prefetch=256):
        count += 1
    return count


async def _task_per_item(n: int) -> int:
    count = 0
    for x in range(n):
        await asyncio.create_task(_work(x))
        count += 1
    return count


def _rate(
    loop_factory: Callable[[], asyncio.AbstractEventLoop],
    make: Callable[[], Coroutine[Any, Any, int]],
    n: int,
    reps: int,
) -> float:
    rates = []
    for _ in range(reps):
        loop = loop_factory()
        try:
            start = time.perf_counter()
            assert loop.run_until_complete(make()) == n
            rates.append(n / (time.perf_counter() - start))
        finally:
            loop.close()
    return statistics.median(rates)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    n, reps = args.n, args.reps
    for name, factory in (("asyncio", asyncio.new_event_loop), ("uvloop", uvloop.new_event_loop)):
        result = {
            "loop": name,
            "n": n,
            "map_async_c1": round(_rate(factory, lambda: _flux(n, 1), n, reps)),
            "map_async_c8": round(_rate(factory, lambda: _flux(n, 8), n, reps)),
            "task_per_item": round(_rate(factory, lambda: _task_per_item(n), n, reps)),
        }
        print(json.dumps(result))


if __name__ == "__main__":
    main()
