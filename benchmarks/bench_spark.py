"""Spark bridge throughput: from_dataframe vs toArrow(), to_spark vs one createDataFrame+write.

Run: ``python -m benchmarks.bench_spark [--rows N] [--reps R] [--pipeline]``. Prints one JSON
line per measurement (median of the repetitions after one warm-up, rows/s, peak RSS of this
process). The pipeline run (``--pipeline``) replays the whole data set once, end to end.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import resource
import shutil
import statistics
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--pipeline", action="store_true", help="also time the full pipeline")
    args = parser.parse_args()

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
