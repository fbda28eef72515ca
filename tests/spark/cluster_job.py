"""A driver on the standalone cluster: the bridge both ways, and a task retry mid-partition.

``python -m tests.spark.cluster_job MASTER WORK`` connects to MASTER (one SparkContext per
process, so the cluster runs in a child of the test) and prints one JSON line:

- ``read``: `from_dataframe` over three partitions computed on the cluster's executors;
- ``retried``: a partition whose first task attempt fails after the reader already took
  batches of it (the attempt sees a flag file the reader writes after three batches, so the
  failure falls mid-partition whatever the timing); Spark retries it on a cluster, the retry
  skips what was delivered; ``attempts`` names the attempts that ran;
- ``landed``: `to_spark` with either engine (the ``spark`` engine writes from the executors),
  read back by the cluster.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa

from reactive_aio import Flux
from reactive_aio.spark import ArrowBatchReader, from_dataframe, spark_session, to_spark, to_thread

ROWS = 3_000_000
"""Rows of the retried frame: far more than the task computes ahead of the reader."""


def _fail_once(flag: str, attempts: str) -> Any:
    def fail(batches: Any) -> Any:
        import os

        from pyspark import TaskContext

        context = TaskContext.get()
        assert context is not None
        attempt = context.attemptNumber()
        with open(os.path.join(attempts, str(attempt)), "w"):
            pass
        for batch in batches:
            if attempt == 0 and os.path.exists(flag):
                raise RuntimeError("the first attempt fails mid-partition")
            yield batch

    return fail


def _retried(spark: Any, work: Path) -> dict[str, Any]:
    flag, attempts = work / "flag", work / "attempts"
    attempts.mkdir()
    df = spark.range(0, ROWS, numPartitions=1).mapInArrow(
        _fail_once(str(flag), str(attempts)), "id long"
    )
    ids: list[int] = []
    with ArrowBatchReader(df, batch_rows=20_000, read_ahead_bytes=64 << 10) as reader:
        for index, batch in enumerate(reader):
            if index == 3:
                flag.touch()
            ids += batch.column("id").to_pylist()
    return {
        "every_row_once": ids == list(range(ROWS)),
        "rows": len(ids),
        "attempts": sorted(int(p.name) for p in attempts.iterdir()),
    }


async def main(master: str, work: Path) -> None:
    spark = await to_thread(spark_session, master, app_name="cluster_job")
    try:
        df = spark.range(0, 30_000, numPartitions=3).selectExpr("id", "cast(id AS string) AS s")
        batches = await from_dataframe(df, batch_rows=4_000).to_list()
        table = pa.Table.from_batches(batches)
        read = table.column("id").to_pylist() == list(range(30_000))
        retried = await to_thread(_retried, spark, work)
        landed = {}
        for engine in ("arrow", "spark"):
            rows = [
                pa.record_batch({"id": list(range(i, i + 500)), "pos": list(range(i, i + 500))})
                for i in range(0, 3_000, 500)
            ]
            sink = to_spark(
                work / engine, spark=spark, engine=engine, batch_rows=1_000, positions="pos"
            )
            Flux.from_iterable(rows).subscribe(sink)
            await sink
            back = await to_thread(spark.read.parquet(str(work / engine)).collect)
            landed[engine] = sorted(row.id for row in back)
        print(
            json.dumps(
                {
                    "read": read,
                    "retried": retried,
                    "landed": {k: v == list(range(3_000)) for k, v in landed.items()},
                }
            ),
            flush=True,
        )
    finally:
        await to_thread(spark.stop)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2])))
