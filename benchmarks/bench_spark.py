"""Spark bridge throughput and memory, every variant with its default settings.

Run: ``python -m benchmarks.bench_spark [--rows N] [--rounds R] [--pipeline] [--memory]``.

Timing: one local Spark session; after a warm-up run of each variant, ``--rounds`` rounds run
every variant once, in an order that alternates from round to round, so load from elsewhere
on the machine lands on all of them alike. Each run records wall time, the CPU time of this
Python process and of the Spark JVM. Ratios are taken per round (paired) and reported as
the median with the lowest and highest round.

- Spark → Python: ``toArrow()``; ``from_dataframe`` (and the reader under it, both transfers).
- Python → Spark: N rows arriving as 10,000-row Arrow batches; ``to_spark`` with its defaults
  (the pyarrow engine), ``to_spark(engine="spark")``, and the reference: one direct
  ``spark.createDataFrame(arrow_table).write.parquet(path)`` of the same rows;
  ``to_spark_stream`` (defaults) into Structured Streaming's Parquet file sink.

Memory (``--memory``): every variant again, each in its own child process with its own Spark
session. The child warms the variant up on 10,000 rows, builds the full-size inputs, then
reports how far the Python process's resident set peaks above that baseline over one run
(``VmHWM`` after resetting it), and the JVM's peak. The peak RSS of a long process says
nothing about any one variant.

Pipeline (``--pipeline``): the reference pipeline over all 336,776 flights, in process (the
session already up), with its phases and the stream phase's events per second.

Prints one JSON line per measurement and a summary table at the end.
"""

from __future__ import annotations

import argparse
import asyncio
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


def _emit(record: dict[str, Any]) -> None:
    print(json.dumps(record), flush=True)


def _jvm_pid(spark: Any) -> int | None:
    try:
        return int(spark.sparkContext._jvm.ProcessHandle.current().pid())
    except Exception:  # a Connect session has no local JVM
        return None


def _cpu_seconds(pid: int | None) -> float:
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def _status_kib(pid: int | str, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def _reset_peak(pid: int | str) -> None:
    Path(f"/proc/{pid}/clear_refs").write_text("5")


# -- the variants --------------------------------------------------------------------------


def _variants(spark: Any, n: int, work: Path) -> dict[str, Callable[[], int]]:
    """Each variant: a function doing the whole job once and returning the rows it moved."""
    import pyarrow as pa

    from reactive_aio import Flux
    from reactive_aio.spark import ArrowBatchReader, from_dataframe, to_spark, to_spark_stream

    df = spark.range(0, n, numPartitions=4).selectExpr(
        "id", "id * 0.5 AS x", "cast(id % 1000 AS string) AS s", "id % 7 = 0 AS flag"
    )
    df = df.cache()
    df.count()
    table = df.toArrow()
    batches = table.to_batches(max_chunksize=BATCH)

    def fresh(name: str) -> Path:
        path = work / name
        shutil.rmtree(path, ignore_errors=True)
        return path

    def reader(path: str) -> Callable[[], int]:
        def run() -> int:
            with ArrowBatchReader(df, path=path) as batches_out:  # type: ignore[arg-type]
                return sum(b.num_rows for b in batches_out)

        return run

    def from_df() -> int:
        async def run() -> int:
            total = 0
            async for batch in from_dataframe(df).iterate(prefetch=2):
                total += batch.num_rows
            return total

        return asyncio.run(run())

    def direct() -> int:
        spark.createDataFrame(table).write.parquet(str(fresh("direct")))
        return n

    def sink(**options: Any) -> Callable[[], int]:
        def run() -> int:
            async def land() -> int:
                out = fresh("sink")
                landed = to_spark(out, spark=spark, **options)
                Flux.from_iterable(batches).subscribe(landed)
                return await landed

            return asyncio.run(land())

        return run

    def stream() -> int:
        async def run() -> int:
            out, checkpoint = fresh("stream"), fresh("stream-checkpoint")
            source = Flux.from_iterable(batches)
            feed = to_spark_stream(
                source, spark, schema="id long, x double, s string, flag boolean"
            )
            writer = feed.df.writeStream.format("parquet").option(
                "checkpointLocation", str(checkpoint)
            )
            query = await asyncio.to_thread(writer.start, str(out))
            try:
                rows = await feed.completed()
                await asyncio.to_thread(query.processAllAvailable)
            finally:
                await asyncio.to_thread(query.stop)
                await feed.aclose()
            return rows

        return asyncio.run(run())

    del pa
    return {
        "toArrow": lambda: df.toArrow().num_rows,
        "reader stream": reader("stream"),
        "reader partition": reader("partition"),
        "from_dataframe": from_df,
        "direct createDataFrame+write": direct,
        "to_spark": sink(),
        "to_spark engine=spark": sink(engine="spark"),
        "to_spark_stream → parquet": stream,
    }


PAIRS = (
    ("from_dataframe", "toArrow"),
    ("to_spark", "direct createDataFrame+write"),
    ("to_spark engine=spark", "direct createDataFrame+write"),
)

DEFAULTS = {
    "from_dataframe": "batch_rows=65,536, prefetch 2 (the async for)",
    "to_spark": "batch_rows=100,000, max_latency=5 s, engine=arrow",
    "to_spark engine=spark": "batch_rows=100,000, max_latency=5 s",
    "to_spark_stream → parquet": "capacity=500,000, rows_per_batch=250,000, partitions=parallelism",
    "direct createDataFrame+write": "no coalesce, Spark's defaults",
}


def _time(spark: Any, n: int, rounds: int, work: Path) -> dict[str, list[dict[str, float]]]:
    variants = _variants(spark, n, work)
    jvm = _jvm_pid(spark)
    for name, run in variants.items():  # warm-up: the JIT, code generation, Python workers
        assert run() == n, name
    samples: dict[str, list[dict[str, float]]] = {name: [] for name in variants}
    names = list(variants)
    for round_ in range(rounds):
        order = names if round_ % 2 == 0 else names[::-1]
        for name in order:
            wall, cpu, jvm_cpu = time.perf_counter(), time.process_time(), _cpu_seconds(jvm)
            rows = variants[name]()
            sample = {
                "wall_s": time.perf_counter() - wall,
                "cpu_s": time.process_time() - cpu,
                "jvm_cpu_s": _cpu_seconds(jvm) - jvm_cpu,
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
            "median_jvm_cpu_s": round(statistics.median(s["jvm_cpu_s"] for s in runs), 3),
            "defaults": DEFAULTS.get(name, ""),
        }
    ratios: dict[str, Any] = {}
    for subject, reference in PAIRS:
        paired = [
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
    from reactive_aio.spark import spark_session

    spark = spark_session("local[2]", app_name="bench_spark memory")
    work = Path(tempfile.mkdtemp(prefix="bench_spark-"))
    try:
        # Warm up on a small input (imports, Python workers, the JIT), so the full-size run's
        # allocations are not already in the baseline; the full-size inputs are.
        assert _variants(spark, 10_000, work)[variant]() == 10_000
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
        jvm_peak = _status_kib(jvm, "VmHWM") if jvm is not None else 0
        _emit(
            {
                "memory": variant,
                "rows": n,
                "python_base_mib": round(base / 1024),
                "python_peak_mib": round(peak / 1024),
                "python_growth_mib": round(max(0, peak - base) / 1024),
                "jvm_peak_mib": round(jvm_peak / 1024),
                "seconds": round(seconds, 2),
            }
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
        spark.stop()


def _memory(n: int) -> list[dict[str, Any]]:
    names = ["toArrow", "from_dataframe", "direct createDataFrame+write", "to_spark"]
    names += ["to_spark engine=spark", "to_spark_stream → parquet"]
    results = []
    root = Path(__file__).resolve().parent.parent
    for name in names:
        done = subprocess.run(
            [sys.executable, "-m", "benchmarks.bench_spark", "--child", name, "--rows", str(n)],
            cwd=root,
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


# -- the pipeline --------------------------------------------------------------------------


def _pipeline(spark: Any, work: Path) -> dict[str, Any]:
    from reactive_aio.pipeline import run_pipeline

    out = work / "pipeline"
    shutil.rmtree(out, ignore_errors=True)
    started = time.perf_counter()
    result = asyncio.run(
        run_pipeline(out=out, spark=spark, chart=True, progress=False, log=io.StringIO())
    )
    stream = result.phases["stream"]
    record = {
        "bench": "pipeline, all flights, session up",
        "read": result.read,
        "landed": result.landed,
        "rejected": result.rejected,
        "wall_s": round(time.perf_counter() - started, 1),
        "stream_events_per_s": round(result.read / stream),
        "phases_s": {k: round(v, 1) for k, v in result.phases.items()},
    }
    _emit(record)
    return record


def _table(summary: dict[str, Any], memory: list[dict[str, Any]]) -> str:
    peaks = {m["memory"]: m for m in memory}
    lines = [
        "| variant | rows/s | wall s | Python CPU s | JVM CPU s | Python peak growth MiB | defaults |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for name, row in summary["variants"].items():
        peak = peaks.get(name)
        growth = "" if peak is None else str(peak["python_growth_mib"])
        lines.append(
            f"| {name} | {row['rows_per_s']:,} | {row['median_wall_s']} | {row['median_cpu_s']} "
            f"| {row['median_jvm_cpu_s']} | {growth} | {row['defaults']} |"
        )
    lines.append("")
    lines.append("| paired ratio (rows/s) | median | lowest round | highest round |")
    lines.append("| --- | ---: | ---: | ---: |")
    for name, ratio in summary["ratios"].items():
        lines.append(f"| {name} | {ratio['median']} | {ratio['low']} | {ratio['high']} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--pipeline", action="store_true", help="also time the full pipeline")
    parser.add_argument("--memory", action="store_true", help="peak memory, a child per variant")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child, args.rows)
        return

    from reactive_aio.spark import spark_session

    load = os.getloadavg()
    spark = spark_session("local[2]", app_name="bench_spark")
    work = Path(tempfile.mkdtemp(prefix="bench_spark-"))
    try:
        _emit({"setup": "local[2]", "rows": args.rows, "rounds": args.rounds, "load_1m": load[0]})
        samples = _time(spark, args.rows, args.rounds, work)
        summary = _summary(args.rows, samples)
        _emit(summary)
        if args.pipeline:
            _pipeline(spark, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        spark.stop()
    memory = _memory(args.rows) if args.memory else []
    print()
    print(_table(summary, memory))
    print(f"\nload average at start {load[0]:.1f}, at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
