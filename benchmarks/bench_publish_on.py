"""W2: ``Flux.range(0, N).publish_on(buffer_size=256)`` against an ``asyncio.Queue(256)`` pair.

Run: ``python -m benchmarks.bench_publish_on [--n N] [--reps R]``; both workloads are measured
in the same run, on the default asyncio loop and on uvloop, and one JSON line is printed per
loop with the median items per second of each and their ratio.
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

from reactive_aio import Flux, Subscription


class _Counter:
    """Counts items; requests everything once (the drain still hops per batch)."""

    def __init__(self, done: asyncio.Future[int]) -> None:
        self.count = 0
        self.done = done

    def on_subscribe(self, subscription: Subscription) -> None:
        subscription.request(2**63 - 1)

    def on_next(self, item: int) -> None:
        self.count += 1

    def on_error(self, error: BaseException) -> None:
        self.done.set_exception(error)

    def on_complete(self) -> None:
        self.done.set_result(self.count)


async def publish_on(n: int) -> int:
    done: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    Flux.range(0, n).publish_on(buffer_size=256).subscribe(_Counter(done))
    return await done


async def queue_pair(n: int) -> int:
    queue: asyncio.Queue[int | None] = asyncio.Queue(256)

    async def produce() -> None:
        for i in range(n):
            await queue.put(i)
        await queue.put(None)

    async def consume() -> int:
        count = 0
        while (await queue.get()) is not None:
            count += 1
        return count

    producer = asyncio.create_task(produce())
    count = await consume()
    await producer
    return count


async def _measure(fn: Callable[[int], Coroutine[Any, Any, int]], n: int, reps: int) -> float:
    rates = []
    for _ in range(reps):
        start = time.perf_counter()
        assert await fn(n) == n
        rates.append(n / (time.perf_counter() - start))
    return statistics.median(rates)


async def _run(n: int, reps: int) -> dict[str, float]:
    await publish_on(n // 10)  # warm-up
    await queue_pair(n // 10)
    ours = await _measure(publish_on, n, reps)
    theirs = await _measure(queue_pair, n, reps)
    return {
        "publish_on_items_per_s": ours,
        "queue_pair_items_per_s": theirs,
        "ratio": ours / theirs,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    for name, factory in (("asyncio", asyncio.new_event_loop), ("uvloop", uvloop.new_event_loop)):
        with asyncio.Runner(loop_factory=factory) as runner:
            result = runner.run(_run(args.n, args.reps))
        print(json.dumps({"workload": "W2", "loop": name, "n": args.n, **result}))


if __name__ == "__main__":
    main()
