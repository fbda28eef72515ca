"""Streaming both ways: a publisher over a streaming query, and a streaming source fed by one."""

from __future__ import annotations

import asyncio
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from reactive_aio import Flux
from reactive_aio.spark import from_streaming_query, to_spark_stream
from reactive_aio.testing import TestSubscriber

BOTH_LOOPS = ["asyncio", "uvloop"]


async def test_a_finite_query_streams_every_row_then_completes(spark: Any, tmp_path: Path) -> None:
    source = tmp_path / "in"
    # Three files, one micro-batch each (maxFilesPerTrigger): several epochs, one write job.
    spark.range(0, 3_000, numPartitions=3).write.parquet(str(source))
    df = spark.readStream.schema("id long").option("maxFilesPerTrigger", 1).parquet(str(source))
    batches = await from_streaming_query(df, batch_rows=400, available_now=True).to_list()
    assert all(b.num_rows <= 400 for b in batches)
    ids = sorted(pa.concat_arrays([b.column("id") for b in batches]).to_pylist())
    assert ids == list(range(3_000))


async def test_a_micro_batch_larger_than_the_window_arrives_in_slices(
    spark: Any, tmp_path: Path
) -> None:
    source = tmp_path / "big"
    spark.range(0, 4_000_000, numPartitions=1).write.parquet(str(source))  # one 32 MB file
    df = spark.readStream.schema("id long").parquet(str(source))
    rows = 0
    sizes: set[int] = set()
    tracemalloc.start()
    try:
        async for batch in from_streaming_query(
            df, batch_rows=10_000, prefetch=2, available_now=True
        ).iterate(prefetch=1):
            rows += batch.num_rows
            sizes.add(batch.num_rows)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert rows == 4_000_000
    assert max(sizes) == 10_000
    # The window is a few 80 kB slices; collecting the micro-batch whole would take 32 MB.
    assert peak < 4 * 2**20, f"peak {peak / 2**20:.1f} MiB of Python memory"


@pytest.mark.asyncio(loop_factories=BOTH_LOOPS)
async def test_demand_holds_the_query_and_cancel_stops_it(spark: Any) -> None:
    df = spark.readStream.format("rate").option("rowsPerSecond", 50).load()
    subscriber = TestSubscriber[Any](initial_request=1)
    from_streaming_query(df, batch_rows=1, trigger_interval=0.2).subscribe(subscriber)
    await subscriber.wait_for_values(1, timeout=120)
    subscription: Any = subscriber.subscription
    query = subscription.query
    # One row was asked for: the sink holds the micro-batch, nothing more reaches the loop.
    assert len(subscriber.values) == 1
    assert not subscription._queue
    subscription.request(2)
    await subscriber.wait_for_values(3, timeout=120)
    assert [b.num_rows for b in subscriber.values] == [1, 1, 1]
    subscriber.cancel()
    # stop() returns only once the blocked sink let go; the bound only turns a hang into a failure.
    deadline = time.monotonic() + 60
    while query.isActive:
        assert time.monotonic() < deadline, "the streaming query did not stop after the cancel"
        await asyncio.sleep(0.05)
    assert not subscriber.errors


async def test_a_publisher_feeds_a_streaming_query(spark: Any) -> None:
    rows = Flux.range(0, 5_000).map(lambda i: {"id": i, "name": f"r{i}"})
    # 5,000 rows through a 1,000-row buffer: Spark's commits must keep freeing it.
    feed = to_spark_stream(rows, spark, schema="id long, name string", capacity=1_000)
    query = await asyncio.to_thread(
        lambda: feed.df.writeStream.format("memory").queryName("feed_rows").start()
    )
    try:
        assert await feed.completed() == 5_000
        await asyncio.to_thread(query.processAllAvailable)
        landed = await asyncio.to_thread(
            lambda: spark.sql("SELECT id, name FROM feed_rows").toArrow().to_pylist()
        )
    finally:
        await asyncio.to_thread(query.stop)
        feed.close()
    assert sorted(landed, key=lambda r: r["id"]) == [
        {"id": i, "name": f"r{i}"} for i in range(5_000)
    ]


def test_a_buffer_smaller_than_two_micro_batches_is_refused(spark: Any) -> None:
    with pytest.raises(ValueError, match="at least twice"):
        to_spark_stream(Flux.range(0, 1), spark, schema="id long", capacity=10, rows_per_batch=6)


async def test_a_row_that_does_not_fit_fails_the_feed(spark: Any) -> None:
    feed = to_spark_stream(
        Flux.from_iterable([{"id": 1}, {"name": "no id"}]), spark, schema="id long", capacity=10
    )
    with pytest.raises(TypeError, match="does not fit"):
        await feed.completed()
    feed.close()


async def test_a_failing_query_ends_the_stream_with_its_error(spark: Any) -> None:
    df = spark.readStream.format("rate").load().selectExpr("raise_error('query broke') AS x")
    subscriber = TestSubscriber[Any](initial_request=5)
    from_streaming_query(df, trigger_interval=0.2).subscribe(subscriber)
    await subscriber.wait_terminated(timeout=120)
    assert subscriber.values == []
    assert len(subscriber.errors) == 1
    assert "query broke" in str(subscriber.errors[0])


async def test_an_upstream_error_fails_the_feed_after_its_rows(spark: Any) -> None:
    rows = Flux.from_iterable([(1,), (2,)]).concat_with(Flux.error(ValueError("source broke")))
    feed = to_spark_stream(rows, spark, schema="id long", capacity=10)
    with pytest.raises(ValueError, match="source broke"):
        await feed.completed()
    # The rows before the error stay served; Spark is told of the error once it read them.
    assert feed.answer({"token": feed._token, "op": "read", "start": 0, "end": 2}) == [(1,), (2,)]
    with pytest.raises(RuntimeError, match="source broke"):
        feed.answer({"token": feed._token, "op": "latest", "start": 2})
    with pytest.raises(PermissionError):
        feed.answer({"token": "guessed", "op": "read", "start": 0, "end": 2})
    feed.close()
