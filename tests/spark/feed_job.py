"""A driver process for the restart test: streams a replayable source into Parquet files.

``python -m tests.spark.feed_job OUT CHECKPOINT ROWS`` starts local Spark, feeds the rows
``0..ROWS-1`` through `to_spark_stream` into the Parquet file sink at OUT with its checkpoint
at CHECKPOINT, and exits once every row is committed. The feed holds 6,000 rows and a
micro-batch takes 3,000, so the stream takes many micro-batches and a test can kill the
process between two of them. The source is a function from a position to a publisher that
emits from there, so a rerun after a kill resumes where the checkpoint says.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pyarrow as pa

from reactive_aio import Flux
from reactive_aio.spark import spark_session, to_spark_stream, to_thread

CHUNK = 500


def rows_from(total: int) -> Any:
    def replay(start: int) -> Flux[Any]:
        chunks = [
            pa.record_batch({"id": pa.array(range(i, min(i + CHUNK, total)), pa.int64())})
            for i in range(start, total, CHUNK)
        ]
        return Flux.from_iterable(chunks)

    return replay


async def main(out: str, checkpoint: str, total: int) -> None:
    spark = await to_thread(spark_session, "local[2]", app_name="feed_job")
    feed = to_spark_stream(
        rows_from(total), spark, schema="id long", capacity=6_000, rows_per_batch=3_000
    )
    writer = feed.df.writeStream.format("parquet").option("checkpointLocation", checkpoint)
    query = await to_thread(writer.start, out)
    try:
        await feed.completed(query)
        await to_thread(query.processAllAvailable)
    finally:
        await to_thread(query.stop)
        await feed.aclose()
        await to_thread(spark.stop)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
