"""Spark bridge throughput: from_dataframe vs toArrow(), to_spark vs one createDataFrame+write.

Run: ``python -m benchmarks.bench_spark [--rows N] [--reps R] [--pipeline]``. Prints one JSON
line per measurement (median of the repetitions after one warm-up, rows/s, peak RSS of this
process). The pipeline run (``--pipeline``) replays the whole data set once, end to end.

``python -m benchmarks.bench_spark --source [--reps R]`` measures the reading side instead,
variants interleaved in rounds of alternating order in one session, reporting the median of
the paired ratios and their spread: the first batch of `from_dataframe` against
``df.limit(batch_rows).toArrow()`` on one and on many partitions, its throughput against
``toArrow()`` (wall and CPU time of the whole process tree: driver, JVM, Python workers), and
the peak memory of the driver's Python process for each reading variant and for `spark_map`
under unbounded demand, each measured in its own child process.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _measure(name: str, rows: int, reps: int, fn: Callable[[], object]) -> dict[str, Any]:
    fn()  # warm-up: the JVM's JIT and Spark's code generation make the first run slow
    times = []
    for _ in range(reps):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    median = statistics.median(times)
    result = {
        "bench": name,
        "rows": rows,
        "median_s": round(median, 3),
        "rows_per_s": round(rows / median),
        "peak_rss_mb": round(_rss_mb()),
    }
    print(json.dumps(result), flush=True)
    return result


def _tree_cpu_seconds() -> float:
    """CPU time of this process and every descendant (the JVM and its Python workers)."""
    tick = os.sysconf("SC_CLK_TCK")
    total, stack = 0, [os.getpid()]
    while stack:
        pid = stack.pop()
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            total += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
            for tid in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{tid}/children", encoding="ascii") as children:
                    stack.extend(int(child) for child in children.read().split())
        except OSError:
            continue
    return total / tick


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
        cpu.append(timings["variant"][1] / timings["base"][1])
    print(
        json.dumps(
            {
                "bench": name,
                "time_ratio_median": round(statistics.median(wall), 2),
                "time_ratio_spread": [round(min(wall), 2), round(max(wall), 2)],
                "cpu_ratio_median": round(statistics.median(cpu), 2),
            }
        ),
        flush=True,
    )


def _first_batch(df: Any, batch_rows: int, path: str) -> Callable[[], object]:
    from reactive_aio.spark import from_dataframe

    def run() -> object:
        flux = from_dataframe(df, batch_rows=batch_rows, path=path)  # type: ignore[arg-type]
        return asyncio.run(flux.take(1).to_list())

    return run


def _read_all(df: Any, path: str) -> Callable[[], object]:
    from reactive_aio.spark import from_dataframe

    async def count() -> int:
        total = 0
        async for batch in from_dataframe(df, path=path).iterate(prefetch=2):  # type: ignore[arg-type]
            total += batch.num_rows
        return total

    return lambda: asyncio.run(count())


def _bench_frame(spark: Any, rows: int) -> Any:
    return spark.range(0, rows, numPartitions=4).selectExpr(
        "id", "id * 0.5 AS x", "cast(id % 1000 AS string) AS s", "id % 7 = 0 AS flag"
    )


def source_in_session(rows: int, reps: int) -> None:
    """First batch and throughput of from_dataframe against limit().toArrow() and toArrow()."""
    from reactive_aio.spark import spark_session

    spark = spark_session("local[*]", app_name="bench_spark source")
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


_MEMORY_VARIANTS = ("toArrow", "from_dataframe stream", "from_dataframe partition", "spark_map")


def memory_in_child(variant: str, rows: int) -> None:
    """One variant in this (fresh) process; print the Python process's peak RSS during it."""
    import pyarrow as pa

    from reactive_aio import Flux
    from reactive_aio.spark import spark_map, spark_session

    spark = spark_session("local[*]", app_name="bench_spark memory")
    df = _bench_frame(spark, rows).cache()
    df.count()
    _read_all(df, "partition")()  # warm-up, so the peak below is the variant's own
    with open("/proc/self/clear_refs", "w", encoding="ascii") as clear:
        clear.write("5")  # reset VmHWM to the current RSS
    base = _status_mib("VmRSS")
    started = time.perf_counter()
    if variant == "toArrow":
        df.toArrow()
    elif variant == "spark_map":
        source = (
            pa.record_batch({"id": pa.array(range(i, i + 10_000), pa.int64())})
            for i in range(0, rows, 10_000)
        )
        doubled = Flux.from_iterable(source).pipe(
            spark_map(lambda frame: frame.selectExpr("id * 2 AS id"), spark=spark)
        )
        asyncio.run(doubled.last())
    else:
        _read_all(df, variant.split()[1])()
    print(
        json.dumps(
            {
                "bench": f"peak Python RSS, {variant}",
                "rows": rows,
                "seconds": round(time.perf_counter() - started, 2),
                "base_mib": round(base),
                "peak_mib": round(_status_mib("VmHWM")),
            }
        ),
        flush=True,
    )
    spark.stop()


def _status_mib(field: str) -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise LookupError(field)


def source(rows: int, reps: int) -> None:
    """The reading side: paired ratios in one session, then each variant's memory alone."""
    source_in_session(rows, reps)
    for variant in _MEMORY_VARIANTS:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "benchmarks.bench_spark",
                "--memory",
                variant,
                "--rows",
                str(rows),
            ],
            check=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--pipeline", action="store_true", help="also time the full pipeline")
    parser.add_argument("--source", action="store_true", help="the reading side instead")
    parser.add_argument("--memory", choices=_MEMORY_VARIANTS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory:
        memory_in_child(args.memory, args.rows)
        return
    if args.source:
        source(args.rows, args.reps)
        return

    import pyarrow as pa

    from reactive_aio import Flux
    from reactive_aio.pipeline import run_pipeline
    from reactive_aio.spark import ArrowBatchReader, from_dataframe, spark_session, to_spark

    spark = spark_session("local[*]", app_name="bench_spark")
    n = args.rows
    df = spark.range(0, n, numPartitions=4).selectExpr(
        "id", "id * 0.5 AS x", "cast(id % 1000 AS string) AS s", "id % 7 = 0 AS flag"
    )
    df = df.cache()
    df.count()
    results: dict[str, dict[str, Any]] = {}

    # -- Spark → Python --------------------------------------------------------------------
    results["toArrow"] = _measure("toArrow", n, args.reps, df.toArrow)

    def read(path: str) -> Callable[[], object]:
        def run() -> int:
            with ArrowBatchReader(df, batch_rows=65_536, path=path) as reader:  # type: ignore[arg-type]
                return sum(b.num_rows for b in reader)

        return run

    results["reader_internal"] = _measure("reader internal", n, args.reps, read("internal"))
    results["reader_public"] = _measure("reader public", n, args.reps, read("public"))

    def flux_read() -> int:
        async def run() -> int:
            total = 0
            async for batch in from_dataframe(df, batch_rows=65_536).iterate(prefetch=2):
                total += batch.num_rows
            return total

        return asyncio.run(run())

    results["from_dataframe"] = _measure("from_dataframe", n, args.reps, flux_read)
    rows_n = min(n, 200_000)
    small = df.limit(rows_n)
    results["toLocalIterator"] = _measure(
        "toLocalIterator rows", rows_n, 1, lambda: sum(1 for _ in small.toLocalIterator())
    )

    # -- Python → Spark --------------------------------------------------------------------
    table = df.toArrow()
    batches = table.to_batches(max_chunksize=10_000)
    work = Path(tempfile.mkdtemp(prefix="bench_spark-"))

    def direct() -> None:
        out = work / "direct"
        shutil.rmtree(out, ignore_errors=True)
        frame = spark.createDataFrame(table)
        parallelism = spark.sparkContext.defaultParallelism
        frame.coalesce(parallelism).write.mode("overwrite").parquet(str(out))

    def sink_write() -> None:
        out = work / "sink"
        shutil.rmtree(out, ignore_errors=True)

        async def run() -> int:
            sink = to_spark(out, spark=spark, batch_rows=250_000, max_latency=30)
            Flux.from_iterable(batches).subscribe(sink)
            return await sink

        assert asyncio.run(run()) == n

    results["direct_write"] = _measure("createDataFrame+write", n, args.reps, direct)
    results["to_spark"] = _measure("to_spark", n, args.reps, sink_write)
    del pa

    ratios = {
        "from_dataframe/toArrow": round(
            results["from_dataframe"]["rows_per_s"] / results["toArrow"]["rows_per_s"], 2
        ),
        "to_spark/direct": round(
            results["to_spark"]["rows_per_s"] / results["direct_write"]["rows_per_s"], 2
        ),
    }
    print(json.dumps({"ratios": ratios}), flush=True)

    if args.pipeline:
        out = work / "pipeline"
        started = time.perf_counter()
        result = asyncio.run(
            run_pipeline(out=out, spark=spark, chart=True, progress=False, log=io.StringIO())
        )
        print(
            json.dumps(
                {
                    "bench": "pipeline full data set",
                    "read": result.read,
                    "landed": result.landed,
                    "rejected": result.rejected,
                    "wall_s": round(time.perf_counter() - started, 1),
                    "phases": {k: round(v, 1) for k, v in result.phases.items()},
                }
            ),
            flush=True,
        )
    shutil.rmtree(work, ignore_errors=True)
    spark.stop()


if __name__ == "__main__":
    main()
