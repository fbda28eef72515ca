"""Spark bridge throughput and memory, every variant with its default settings.

Run: ``python -m benchmarks.bench_spark [--rows N] [--reps R] [--pipeline] [--memory]``.

Timing: one local Spark session; after a warm-up run of each variant, ``--reps`` rounds run
every variant once, in an order that alternates from round to round, so load from elsewhere
on the machine lands on all of them alike. Each run records its wall time, the CPU time of
this Python process and of the whole process tree (the JVM and Spark's Python workers).
Ratios are taken per round (paired) and reported as the median with the lowest and highest.

- Spark → Python: ``toArrow()``; `from_dataframe` over either transfer.
- Python → Spark: N rows arriving as 10,000-row Arrow batches into `to_spark` with its
  defaults (the pyarrow engine), ``to_spark(engine="spark")``, and the reference: one direct
  ``spark.createDataFrame(arrow_table).write.parquet(path)`` of the same rows, and the floor:
  pyarrow alone with the same durability (see ``--floor``); and
  `to_spark_stream` (defaults) into Structured Streaming's Parquet file sink.

Memory (``--memory``): each variant again, and `spark_map` under unbounded demand, each in
its own child process with its own Spark session. The child warms the variant up on 10,000
rows, builds the full-size inputs, then reports how far the Python process's resident set
peaks above that baseline over one run (``VmHWM`` after resetting it), and the JVM's peak.
The peak RSS of a long process says nothing about any one variant.

Pipeline (``--pipeline``): the reference pipeline over all 336,776 flights in process (the
session already up), with its phases and the stream phase's events per second.

``--floor [--base REV]`` measures `to_spark` (defaults) against its floor without Spark: pyarrow
writing the same rows as they come, ``write_table`` per 100,000 rows into a temporary file,
that file synced, renamed into place and its directory synced (the same durability as one
committed batch). Each measurement is a child process that imports the library (this tree,
or the revision *REV* as well), warms up and times one run on fresh directories; rounds
interleave the sides, order alternating, and the report gives each sink's paired speed ratio
against the floor of its round (above 1: faster than the floor) in wall time and CPU time
(this process), median and spread.

``--source`` measures the reading side's latency instead: the first batch of
`from_dataframe` against ``df.limit(batch_rows).toArrow()`` on one and on many partitions
(every round's read comes right after the previous round's, cancelled once its first batch
arrived),
its throughput against ``toArrow()``, both as paired ratios over rounds of alternating
order, then each reading variant's memory in its own child process.

Prints one JSON line per measurement and, for the default run, a summary table at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

BATCH = 10_000
"""Rows per Arrow batch arriving at the sinks."""

ROOT = Path(__file__).resolve().parent.parent


def _emit(record: dict[str, Any]) -> None:
    print(json.dumps(record), flush=True)


_CPU_SEEN: dict[tuple[int, str], int] = {}
"""Each process's own CPU ticks when last seen, by pid and start time."""


def _tree_cpu_seconds() -> float:
    """CPU time of this process and every descendant (the JVM and its Python workers), those
    that ended since an earlier call included: a process's own user and system time, at the
    last call that saw it (a process that starts and ends between two calls is missed;
    counting the children's times that parents collect would count the others twice)."""
    tick = os.sysconf("SC_CLK_TCK")
    stack = [os.getpid()]
    while stack:
        pid = stack.pop()
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            _CPU_SEEN[pid, fields[19]] = int(fields[11]) + int(fields[12])  # utime stime
            for tid in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{tid}/children", encoding="ascii") as children:
                    stack.extend(int(child) for child in children.read().split())
        except OSError:
            continue
    return sum(_CPU_SEEN.values()) / tick


def _jvm_pid(spark: Any) -> int | None:
    try:
        return int(spark.sparkContext._jvm.ProcessHandle.current().pid())
    except Exception:  # a Connect session has no local JVM
        return None


def _status_kib(pid: int | str, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise LookupError(field)


def _reset_peak(pid: int | str) -> None:
    Path(f"/proc/{pid}/clear_refs").write_text("5")  # VmHWM back to the current RSS


def _bench_frame(spark: Any, rows: int) -> Any:
    return spark.range(0, rows, numPartitions=4).selectExpr(
        "id", "id * 0.5 AS x", "cast(id % 1000 AS string) AS s", "id % 7 = 0 AS flag"
    )


def _floor(batches: list[Any], out: Path, rows: int = 100_000) -> int:
    """pyarrow alone with a batch's durability: write_table per *rows* rows to a temporary
    file, fsync it, rename it into place, fsync the directory."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out.mkdir(parents=True)
    directory = os.open(out, os.O_RDONLY)
    landed, pending, held = 0, [], 0
    try:
        for index, batch in enumerate(batches):
            pending.append(batch)
            held += batch.num_rows
            if held < rows and index < len(batches) - 1:
                continue
            temporary, final = out / f".part-{landed}.tmp", out / f"part-{landed:012d}.parquet"
            pq.write_table(pa.Table.from_batches(pending), temporary, coerce_timestamps="us")
            descriptor = os.open(temporary, os.O_RDONLY)
            os.fsync(descriptor)
            os.close(descriptor)
            os.rename(temporary, final)
            os.fsync(directory)
            landed, pending, held = landed + held, [], 0
    finally:
        os.close(directory)
    return landed


def _floor_table(rows: int) -> Any:
    """The bench frame's columns, built by pyarrow."""
    import numpy as np
    import pyarrow as pa

    ids = np.arange(rows, dtype=np.int64)
    return pa.table(
        {"id": ids, "x": ids * 0.5, "s": (ids % 1000).astype(str), "flag": ids % 7 == 0}
    )


def _floor_child(side: str, tree: str, rows: int) -> None:
    """In a child: import reactive_aio from *tree*, warm up *side*, time one run, print JSON."""
    sys.path.insert(0, tree)
    import reactive_aio
    from reactive_aio import Flux
    from reactive_aio.spark import to_spark

    if not Path(reactive_aio.__file__).resolve().is_relative_to(Path(tree).resolve()):
        raise SystemExit(f"reactive_aio imported from {reactive_aio.__file__}, not {tree}")
    work = Path(tempfile.mkdtemp(prefix="bench_spark-floor-"))

    def run(batches: list[Any], out: Path) -> int:
        if side == "floor":
            return _floor(batches, out)

        async def land() -> int:
            sink = to_spark(out)
            Flux.from_iterable(batches).subscribe(sink)
            return await sink

        return asyncio.run(land())

    try:
        batches = _floor_table(rows).to_batches(max_chunksize=BATCH)
        assert run(batches[:20], work / "warm-up") == 20 * BATCH
        gc.collect()
        wall, cpu = time.perf_counter(), time.process_time()
        assert run(batches, work / "out") == rows
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps({"wall": wall, "cpu": cpu}))


def floor(rows: int, reps: int, base: str | None) -> None:
    """`to_spark` of this tree (and of *base*) against the pyarrow floor, paired by round."""
    from benchmarks.versions import _tree

    with contextlib.ExitStack() as stack:
        sides = {"floor": str(ROOT), "to_spark": str(ROOT)}
        if base is not None:
            sides[f"to_spark {base}"] = stack.enter_context(_tree(base))
        times: dict[str, list[tuple[float, float]]] = {side: [] for side in sides}
        for round_ in range(reps):
            for side in list(sides)[:: 1 if round_ % 2 == 0 else -1]:
                done = subprocess.run(
                    [sys.executable, "-m", "benchmarks.bench_spark", "--floor-child",
                     side.split()[0], sides[side], "--rows", str(rows)],
                    cwd=ROOT, capture_output=True, text=True, check=False,
                )  # fmt: skip
                if done.returncode != 0:
                    raise RuntimeError(f"{side} failed: {done.stderr[-2000:]}")
                measured = json.loads(done.stdout.splitlines()[-1])
                times[side].append((measured["wall"], measured["cpu"]))
                _emit({"bench": side, "round": round_, "rows": rows, **measured})
    lines = [
        f"{rows:,} rows in {BATCH:,}-row Arrow batches; {reps} rounds, sides interleaved; "
        "speed ratio = floor time / sink time per round (above 1: faster than the floor)",
        "",
        "| sink / pyarrow floor | wall median | wall spread | CPU median | CPU spread |",
        "| --- | ---: | --- | ---: | --- |",
    ]
    for side in sides:
        if side == "floor":
            continue
        pairs = list(zip(times["floor"], times[side], strict=True))
        by_wall = [f[0] / s[0] for f, s in pairs]
        by_cpu = [f[1] / s[1] for f, s in pairs]
        lines.append(
            f"| {side} | {statistics.median(by_wall):.2f} "
            f"| {min(by_wall):.2f} to {max(by_wall):.2f} | {statistics.median(by_cpu):.2f} "
            f"| {min(by_cpu):.2f} to {max(by_cpu):.2f} |"
        )
    print("\n".join(lines))


def _read_all(df: Any, path: str) -> Callable[[], int]:
    from reactive_aio.spark import from_dataframe

    async def count() -> int:
        total = 0
        async for batch in from_dataframe(df, path=path).iterate(prefetch=2):  # type: ignore[arg-type]
            total += batch.num_rows
        return total

    return lambda: asyncio.run(count())


# -- the variants --------------------------------------------------------------------------


def _variants(spark: Any, n: int, work: Path) -> dict[str, Callable[[], int]]:
    """Each variant: a function doing the whole job once and returning the rows it moved."""
    from reactive_aio import Flux
    from reactive_aio.spark import spark_map, to_spark, to_spark_stream

    df = _bench_frame(spark, n).cache()
    df.count()
    table = df.toArrow()
    batches = table.to_batches(max_chunksize=BATCH)

    def fresh(name: str) -> Path:
        path = work / name
        shutil.rmtree(path, ignore_errors=True)
        return path

    def direct() -> int:
        spark.createDataFrame(table).write.parquet(str(fresh("direct")))
        return n

    def sink(**options: Any) -> Callable[[], int]:
        def run() -> int:
            async def land() -> int:
                landed = to_spark(fresh("sink"), spark=spark, **options)
                Flux.from_iterable(batches).subscribe(landed)
                return await landed

            return asyncio.run(land())

        return run

    def stream() -> int:
        async def run() -> int:
            out, checkpoint = fresh("stream"), fresh("stream-checkpoint")
            schema = "id long, x double, s string, flag boolean"
            feed = to_spark_stream(Flux.from_iterable(batches), spark, schema=schema)
            writer = feed.df.writeStream.format("parquet").option(
                "checkpointLocation", str(checkpoint)
            )
            query = await asyncio.to_thread(writer.start, str(out))
            try:
                rows = await feed.completed(query)
                await asyncio.to_thread(query.processAllAvailable)
            finally:
                await asyncio.to_thread(query.stop)
                await feed.aclose()
            return rows

        return asyncio.run(run())

    def mapped() -> int:
        doubled = Flux.from_iterable(batches).pipe(
            spark_map(lambda frame: frame.selectExpr("id * 2 AS id"), spark=spark)
        )
        rows: int = asyncio.run(doubled.reduce(lambda total, t: total + t.num_rows, 0))
        return rows

    return {
        "toArrow": lambda: df.toArrow().num_rows,
        "from_dataframe stream": _read_all(df, "stream"),
        "from_dataframe partition": _read_all(df, "partition"),
        "direct createDataFrame+write": direct,
        "pyarrow floor": lambda: _floor(batches, fresh("floor")),
        "to_spark": sink(),
        "to_spark engine=spark": sink(engine="spark"),
        "to_spark_stream → parquet": stream,
        "spark_map": mapped,
    }


TIMED = (
    "toArrow",
    "from_dataframe stream",
    "from_dataframe partition",
    "direct createDataFrame+write",
    "pyarrow floor",
    "to_spark",
    "to_spark engine=spark",
    "to_spark_stream → parquet",
)

PAIRS = (
    ("from_dataframe stream", "toArrow"),
    ("from_dataframe partition", "toArrow"),
    ("to_spark", "pyarrow floor"),
    ("to_spark", "direct createDataFrame+write"),
    ("to_spark engine=spark", "direct createDataFrame+write"),
)

DEFAULTS = {
    "from_dataframe stream": "batch_rows=65,536, async for with prefetch 2",
    "from_dataframe partition": "batch_rows=65,536, async for with prefetch 2",
    "direct createDataFrame+write": "Spark's defaults, no coalesce",
    "pyarrow floor": "write_table per 100,000 rows; fsync, rename, fsync directory",
    "to_spark": "batch_rows=100,000, max_latency=5 s, engine=arrow",
    "to_spark engine=spark": "batch_rows=100,000, max_latency=5 s",
    "to_spark_stream → parquet": "capacity=500,000, rows_per_batch=250,000, a task per core",
}


def _time(spark: Any, n: int, reps: int, work: Path) -> dict[str, list[dict[str, float]]]:
    variants = _variants(spark, n, work)
    for name in TIMED:  # warm-up: the JIT, code generation, Python workers
        assert variants[name]() == n, name
    samples: dict[str, list[dict[str, float]]] = {name: [] for name in TIMED}
    for round_ in range(reps):
        for name in TIMED if round_ % 2 == 0 else TIMED[::-1]:
            wall, cpu, tree = time.perf_counter(), time.process_time(), _tree_cpu_seconds()
            rows = variants[name]()
            sample = {
                "wall_s": time.perf_counter() - wall,
                "cpu_s": time.process_time() - cpu,
                "tree_cpu_s": _tree_cpu_seconds() - tree,
            }
            assert rows == n, (name, rows)
            samples[name].append(sample)
            _emit({"bench": name, "round": round_, "rows": n, **_rounded(sample)})
    return samples


def _rounded(sample: dict[str, float]) -> dict[str, float]:
    return {k: round(v, 3) for k, v in sample.items()}


def _summary(n: int, samples: dict[str, list[dict[str, float]]]) -> dict[str, Any]:
    rows: dict[str, Any] = {}
    for name, runs in samples.items():
        wall = statistics.median(s["wall_s"] for s in runs)
        rows[name] = {
            "rows_per_s": round(n / wall),
            "median_wall_s": round(wall, 3),
            "median_cpu_s": round(statistics.median(s["cpu_s"] for s in runs), 3),
            "median_tree_cpu_s": round(statistics.median(s["tree_cpu_s"] for s in runs), 3),
            "defaults": DEFAULTS.get(name, ""),
        }
    ratios: dict[str, Any] = {}
    for subject, reference in PAIRS:
        paired = [  # a ratio of rows/s: above 1 the subject is faster
            r["wall_s"] / s["wall_s"]
            for s, r in zip(samples[subject], samples[reference], strict=True)
        ]
        ratios[f"{subject} / {reference}"] = {
            "median": round(statistics.median(paired), 2),
            "low": round(min(paired), 2),
            "high": round(max(paired), 2),
        }
    return {"variants": rows, "ratios": ratios}


# -- memory: one child process per variant --------------------------------------------------


def _child(variant: str, n: int) -> None:
    """One variant in this (fresh) process: its peak memory over one full-size run."""
    from reactive_aio.spark import spark_session

    spark = spark_session("local[2]", app_name="bench_spark memory")
    work = Path(tempfile.mkdtemp(prefix="bench_spark-"))
    try:
        # Warm up on a small input (imports, Python workers, the JIT), so the full-size run's
        # allocations are not already in the baseline; the full-size inputs are.
        assert _variants(spark, BATCH, work)[variant]() == BATCH
        run = _variants(spark, n, work)[variant]
        gc.collect()
        jvm = _jvm_pid(spark)
        _reset_peak("self")
        if jvm is not None:
            _reset_peak(jvm)
        base = _status_kib("self", "VmRSS")
        started = time.perf_counter()
        assert run() == n
        seconds = time.perf_counter() - started
        peak = _status_kib("self", "VmHWM")
        _emit(
            {
                "memory": variant,
                "rows": n,
                "python_base_mib": round(base / 1024),
                "python_peak_mib": round(peak / 1024),
                "python_growth_mib": round(max(0, peak - base) / 1024),
                "jvm_peak_mib": round(_status_kib(jvm, "VmHWM") / 1024) if jvm else None,
                "seconds": round(seconds, 2),
            }
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
        spark.stop()


def _memory(names: tuple[str, ...], n: int) -> list[dict[str, Any]]:
    results = []
    for name in names:
        done = subprocess.run(
            [sys.executable, "-m", "benchmarks.bench_spark", "--child", name, "--rows", str(n)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        lines = [line for line in done.stdout.splitlines() if line.startswith('{"memory"')]
        if done.returncode != 0 or not lines:
            raise RuntimeError(f"memory of {name} failed: {done.stderr[-2000:]}")
        print(lines[-1], flush=True)
        results.append(json.loads(lines[-1]))
    return results


# -- the reading side's latency (--source) --------------------------------------------------


def _paired(
    name: str, reps: int, base: Callable[[], object], variant: Callable[[], object]
) -> None:
    """Rounds of both, order alternating; print the median variant/base ratio and its spread."""
    base()
    variant()  # warm-up: JIT, code generation, Python workers
    wall: list[float] = []
    cpu: list[float] = []
    for round_ in range(reps):
        timings: dict[str, tuple[float, float]] = {}
        for label, fn in (("base", base), ("variant", variant))[:: 1 if round_ % 2 else -1]:
            cpu0, started = _tree_cpu_seconds(), time.perf_counter()
            fn()
            timings[label] = (time.perf_counter() - started, _tree_cpu_seconds() - cpu0)
        wall.append(timings["variant"][0] / timings["base"][0])
        cpu.append(timings["variant"][1] / max(timings["base"][1], 0.01))
    _emit(
        {
            "bench": name,
            "time_ratio_median": round(statistics.median(wall), 2),
            "time_ratio_spread": [round(min(wall), 2), round(max(wall), 2)],
            "cpu_ratio_median": round(statistics.median(cpu), 2),
        }
    )


def _first_batch(df: Any, batch_rows: int, path: str) -> Callable[[], object]:
    from reactive_aio.spark import from_dataframe

    def run() -> object:
        flux = from_dataframe(df, batch_rows=batch_rows, path=path)  # type: ignore[arg-type]
        return asyncio.run(flux.take(1).to_list())

    return run


def source(rows: int, reps: int) -> None:
    """First batch and throughput of from_dataframe against limit().toArrow() and toArrow(),
    paired in one session; then each reading variant's memory alone."""
    from reactive_aio.spark import spark_session

    spark = spark_session("local[2]", app_name="bench_spark source")
    batch_rows = 65_536
    for partitions in (1, 64):
        df = spark.range(0, 4_000_000, numPartitions=partitions)
        limit = df.limit(batch_rows)
        _paired(
            f"first batch / limit(batch_rows).toArrow(), {partitions} partition(s)",
            reps,
            limit.toArrow,
            _first_batch(df, batch_rows, "stream"),
        )
    df = _bench_frame(spark, rows).cache()
    df.count()
    for path in ("stream", "partition"):
        # A ratio of times: below 1 the variant is faster; throughput ratio = 1 / time ratio.
        _paired(
            f"from_dataframe {path} / toArrow(), {rows:,} rows",
            reps,
            df.toArrow,
            _read_all(df, path),
        )
    spark.stop()
    _memory(("toArrow", "from_dataframe stream", "from_dataframe partition", "spark_map"), rows)


# -- the pipeline --------------------------------------------------------------------------


def _pipeline(spark: Any, work: Path) -> dict[str, Any]:
    from reactive_aio_app.pipeline import run_pipeline

    out = work / "pipeline"
    shutil.rmtree(out, ignore_errors=True)
    started = time.perf_counter()
    result = asyncio.run(
        run_pipeline(out=out, spark=spark, chart=True, progress=False, log=io.StringIO())
    )
    record = {
        "bench": "pipeline, all flights, session up",
        "read": result.read,
        "landed": result.landed,
        "rejected": result.rejected,
        "wall_s": round(time.perf_counter() - started, 1),
        "stream_events_per_s": round(result.read / result.phases["stream"]),
        "phases_s": {k: round(v, 1) for k, v in result.phases.items()},
    }
    _emit(record)
    return record


def _table(summary: dict[str, Any], memory: list[dict[str, Any]]) -> str:
    peaks = {m["memory"]: m for m in memory}
    lines = [
        "| variant | rows/s | wall s | CPU s, this process | CPU s, all processes "
        "| Python peak growth MiB | defaults |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for name, row in summary["variants"].items():
        peak = peaks.get(name)
        growth = "" if peak is None else str(peak["python_growth_mib"])
        lines.append(
            f"| {name} | {row['rows_per_s']:,} | {row['median_wall_s']} | {row['median_cpu_s']} "
            f"| {row['median_tree_cpu_s']} | {growth} | {row['defaults']} |"
        )
    lines += ["", "| paired ratio of rows/s | median | lowest | highest |"]
    lines.append("| --- | ---: | ---: | ---: |")
    for name, ratio in summary["ratios"].items():
        lines.append(f"| {name} | {ratio['median']} | {ratio['low']} | {ratio['high']} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--reps", type=int, default=5, help="rounds after the warm-up")
    parser.add_argument("--pipeline", action="store_true", help="also time the full pipeline")
    parser.add_argument("--memory", action="store_true", help="peak memory, a child per variant")
    parser.add_argument("--source", action="store_true", help="the reading side's latency")
    parser.add_argument("--floor", action="store_true", help="to_spark against pyarrow")
    parser.add_argument("--base", help="with --floor: also to_spark of this git revision")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--floor-child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child, args.rows)
        return
    if args.floor_child:
        side, tree = args.floor_child
        _floor_child(side, tree, args.rows)
        return
    if args.source:
        source(args.rows, args.reps)
        return
    if args.floor:
        floor(args.rows, args.reps, args.base)
        return

    from reactive_aio.spark import spark_session

    load = os.getloadavg()[0]
    spark = spark_session("local[2]", app_name="bench_spark")
    work = Path(tempfile.mkdtemp(prefix="bench_spark-"))
    try:
        _emit({"setup": "local[2]", "rows": args.rows, "reps": args.reps, "load_1m": load})
        summary = _summary(args.rows, _time(spark, args.rows, args.reps, work))
        _emit(summary)
        if args.pipeline:
            _pipeline(spark, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        spark.stop()
    memory = _memory((*TIMED, "spark_map"), args.rows) if args.memory else []
    print()
    print(_table(summary, memory))
    print(f"\nload average at start {load:.1f}, at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
