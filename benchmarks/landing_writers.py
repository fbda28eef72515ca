"""Several writer processes on one `to_spark` target, a reader polling it, kills mid-run.

Usage::

    python -m benchmarks.landing_writers [--trials 20] [--rows 6000] [--dir DIR]

Each trial starts two or three writer processes at once on one fresh local target (pyarrow
engine, no Spark), each landing a range of positions that overlaps its neighbours' by half,
in items of 50 rows, shuffled, as a broker redelivering to several consumers would; a reader
process polls ``committed_positions`` the whole time. Every other trial SIGKILLs one writer
once the target holds a commit and starts it again, as a restarted job would. Afterwards it
checks: every position of the union landed exactly once (no row lost, none duplicated), the
committed positions are that union, the reader never failed and never saw the set shrink,
and a new sink opens the target. It prints one line per trial and exits non-zero on any
failure.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reactive_aio import PositionSet

ROOT = Path(__file__).resolve().parents[1]
ITEM_ROWS = 50


def _items(start: int, stop: int, seed: int) -> list[object]:
    import pyarrow as pa

    starts = list(range(start, stop, ITEM_ROWS))
    random.Random(seed).shuffle(starts)
    return [
        pa.record_batch(
            {
                "id": list(range(s, min(s + ITEM_ROWS, stop))),
                "pos": list(range(s, min(s + ITEM_ROWS, stop))),
            }
        )
        for s in starts
    ]


async def _write(
    target: str, start: int, stop: int, seed: int, batch_rows: int, start_at: float
) -> None:
    """Land positions [start, stop) from *start_at* on (wall clock), an item a millisecond."""
    from reactive_aio import Flux
    from reactive_aio.spark import to_spark

    items = _items(start, stop, seed)

    async def paced() -> AsyncIterator[object]:
        for item in items:
            yield item
            await asyncio.sleep(0.001)

    await asyncio.sleep(max(0.0, start_at - time.time()))
    sink = to_spark(target, batch_rows=batch_rows, max_latency=0, positions="pos")
    Flux.from_async_iterable(paced()).subscribe(sink)
    await sink


async def _read(target: str, report: str) -> None:
    """Poll the committed positions until the report file's parent says stop."""
    from reactive_aio.spark import committed_positions

    stop = Path(report).with_suffix(".stop")
    seen: list[int] = []
    errors: list[str] = []
    last = -1
    while not stop.exists():
        try:
            count = len(await committed_positions(target))
        except Exception as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
            count = last
        if count < last:
            errors.append(f"committed positions shrank from {last} to {count}")
        last = count
        seen.append(count)
        await asyncio.sleep(0.005)
    result = json.dumps({"polls": len(seen), "errors": errors})
    await asyncio.to_thread(Path(report).write_text, result)


def _spawn(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "benchmarks.landing_writers", *args],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _commits(target: Path) -> int:
    return len(list((target / "_reactive_aio" / "commits").glob("*.json")))


def _turns(target: Path) -> int:
    """How often the log's batch order passes from one writer to another (0: no overlap)."""
    runs = [
        p.stem.split("-", 1)[1]
        for p in sorted((target / "_reactive_aio" / "commits").glob("*.json"))
    ]
    return sum(a != b for a, b in itertools.pairwise(runs))


def _finish(process: subprocess.Popen[bytes], what: str) -> None:
    _, err = process.communicate(timeout=300)
    if process.returncode != 0:
        raise RuntimeError(f"{what} exited with {process.returncode}: {err.decode()[-2000:]}")


def trial(directory: Path, number: int, rows: int) -> dict[str, object]:
    """One trial; returns what it found."""
    import pyarrow.dataset as ds

    target = directory / f"target-{number}"
    writers = 2 + number % 2
    step = rows // 2
    ranges = [(k * step, k * step + rows) for k in range(writers)]
    batch_rows = 300 + 100 * (number % 4)
    report = directory / f"reader-{number}.json"
    reader = _spawn("--read", str(target), str(report))
    started = time.monotonic()
    start_at = str(time.time() + 2.0)  # after every writer has started up: all at once
    processes = [
        _spawn(
            "--write", str(target), str(a), str(b), str(number * 10 + k), str(batch_rows), start_at
        )
        for k, (a, b) in enumerate(ranges)
    ]
    killed = number % 2 == 1
    if killed:
        victim = processes[-1]
        deadline = time.monotonic() + 120
        while _commits(target) == 0 and victim.poll() is None and time.monotonic() < deadline:
            time.sleep(0.001)
        victim.send_signal(signal.SIGKILL)
        victim.communicate()
        a, b = ranges[-1]
        processes[-1] = _spawn(
            "--write", str(target), str(a), str(b), str(number * 10 + 9), str(batch_rows), "0"
        )
    for k, process in enumerate(processes):
        _finish(process, f"writer {k}")
    report.with_suffix(".stop").touch()
    _finish(reader, "the reader")
    seconds = time.monotonic() - started
    ids = ds.dataset(target, format="parquet").to_table().column("id").to_pylist()
    counts = Counter(ids)
    union = set(range(ranges[0][0], ranges[-1][1]))
    committed = asyncio.run(_reopen(target))
    read = json.loads(report.read_text())
    return {
        "trial": number,
        "writers": writers,
        "killed": killed,
        "rows": len(union),
        "lost": len(union - counts.keys()),
        "duplicated": sum(c - 1 for c in counts.values() if c > 1),
        "foreign": len(counts.keys() - union),
        "committed_ok": set(committed) == union,
        "reader_polls": read["polls"],
        "reader_errors": read["errors"],
        "batches": _commits(target),
        "turns": _turns(target),
        "seconds": round(seconds, 2),
    }


async def _reopen(target: Path) -> PositionSet:
    """Open the target as a new writer would (it must not refuse), then read its positions."""
    from reactive_aio import Flux
    from reactive_aio.spark import committed_positions, to_spark

    reopened = to_spark(target, positions="pos")
    Flux.empty().subscribe(reopened)
    await reopened
    return await committed_positions(target)


def failures(result: dict[str, object]) -> list[str]:
    problems = [
        f"{key} = {result[key]}" for key in ("lost", "duplicated", "foreign") if result[key]
    ]
    if not result["committed_ok"]:
        problems.append("committed positions differ from the union")
    if result["reader_errors"]:
        problems.append(f"reader: {result['reader_errors']}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--rows", type=int, default=6_000, help="positions per writer")
    parser.add_argument("--dir", type=Path, help="where the targets go (default: a temp dir)")
    parser.add_argument("--write", nargs=6, help=argparse.SUPPRESS)
    parser.add_argument("--read", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.write:
        target, start, stop, seed, batch_rows, start_at = args.write
        asyncio.run(
            _write(target, int(start), int(stop), int(seed), int(batch_rows), float(start_at))
        )
        return 0
    if args.read:
        asyncio.run(_read(*args.read))
        return 0
    with tempfile.TemporaryDirectory() as temporary:
        directory = args.dir or Path(temporary)
        directory.mkdir(parents=True, exist_ok=True)
        bad = 0
        for number in range(args.trials):
            result = trial(directory, number, args.rows)
            problems = failures(result)
            bad += bool(problems)
            summary = ", ".join(f"{k}={v}" for k, v in result.items() if k != "reader_errors")
            print(f"{'FAIL' if problems else 'ok'}: {summary} {'; '.join(problems)}", flush=True)
        print(f"{args.trials - bad} of {args.trials} trials held (pid {os.getpid()})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
