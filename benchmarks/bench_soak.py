"""Soak: 10,000,000 items through a 10-stage pipeline with a slow stage, at flat memory.

Each size runs in a fresh subprocess and reports its peak RSS (VmHWM), so the figures do not
contaminate each other. With backpressure every buffer is bounded by demand, so the peak at
10,000,000 items should be within a few percent of the peak at 1,000,000.

Run: ``python -m benchmarks.bench_soak`` (``--sizes 1000000 10000000``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time

STAGES = 10


def _peak_rss_kib() -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return -1


async def _pipeline(count: int) -> tuple[int, int]:
    from reactive_aio import Flux

    flux = (
        Flux.range(0, count)
        .map(lambda x: x + 1)  # 1
        .filter(lambda x: x % 7 != 0)  # 2
        .map(lambda x: x * 3)  # 3
        .publish_on(buffer_size=256)  # 4: an async boundary
        .map(lambda x: x - 1)  # 5
        .filter(lambda x: x % 5 != 0)  # 6
        .map(lambda x: (x, x & 1))  # 7
        .map(lambda pair: pair[0] + pair[1])  # 8
        .limit_rate(512)  # 9
    )
    seen = 0
    total = 0
    async for item in flux.iterate(prefetch=128):  # 10: the slow consumer
        seen += 1
        total += item
        if seen % 1000 == 0:
            await asyncio.sleep(0)  # yields to the loop: the producer must wait for it
    return seen, total


def _child(count: int, loop: str) -> None:
    started = time.perf_counter()
    if loop == "uvloop":
        import uvloop

        seen, _ = uvloop.run(_pipeline(count))
    else:
        seen, _ = asyncio.run(_pipeline(count))
    elapsed = time.perf_counter() - started
    print(
        json.dumps(
            {"items": count, "delivered": seen, "seconds": elapsed, "peak_rss_kib": _peak_rss_kib()}
        )
    )


def run(sizes: list[int], loop: str = "asyncio") -> list[dict[str, float]]:
    """Run every size in its own process and return the measurements."""
    results = []
    for size in sizes:
        out = subprocess.run(
            [sys.executable, "-m", "benchmarks.bench_soak", "--child", str(size), "--loop", loop],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--loop", choices=["asyncio", "uvloop"], default="asyncio")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        _child(args.child, args.loop)
        return
    results = run(args.sizes, args.loop)
    base = results[0]["peak_rss_kib"]
    print(f"{'items':>12} {'seconds':>9} {'ns/item':>8} {'peak RSS MiB':>13} {'vs first':>9}")
    for r in results:
        print(
            f"{int(r['items']):>12,} {r['seconds']:>9.1f} {r['seconds'] / r['items'] * 1e9:>8.0f} "
            f"{r['peak_rss_kib'] / 1024:>13.1f} {r['peak_rss_kib'] / base - 1:>+9.1%}"
        )


if __name__ == "__main__":
    main()
