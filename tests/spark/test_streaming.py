"""Streaming both ways: a publisher over a streaming query, and a streaming source fed by one."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.errors import StreamingQueryException

from reactive_aio import Flux
from reactive_aio.spark import from_streaming_query, to_spark_stream
from reactive_aio.testing import TestSubscriber

from .processes import crash_when

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
        assert await feed.completed(query) == 5_000
        await asyncio.to_thread(query.processAllAvailable)
        landed = await asyncio.to_thread(
            lambda: spark.sql("SELECT id, name FROM feed_rows").toArrow().to_pylist()
        )
    finally:
        await asyncio.to_thread(query.stop)
        await feed.aclose()
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
    await feed.aclose()


async def test_a_failing_query_ends_the_stream_with_its_error(spark: Any) -> None:
    df = spark.readStream.format("rate").load().selectExpr("raise_error('query broke') AS x")
    subscriber = TestSubscriber[Any](initial_request=5)
    from_streaming_query(df, trigger_interval=0.2).subscribe(subscriber)
    await subscriber.wait_terminated(timeout=120)
    assert subscriber.values == []
    assert len(subscriber.errors) == 1
    assert "query broke" in str(subscriber.errors[0])


def _ids(ipc: bytes) -> list[int]:
    ids: list[int] = pa.ipc.open_stream(ipc).read_all().column("id").to_pylist()
    return ids


async def test_an_upstream_error_fails_the_feed_after_its_rows(spark: Any) -> None:
    rows = Flux.from_iterable([(1,), (2,)]).concat_with(Flux.error(ValueError("source broke")))
    feed = to_spark_stream(rows, spark, schema="id long", capacity=10)
    with pytest.raises(ValueError, match="source broke"):
        await feed.completed()
    # The rows before the error stay served; Spark is told of the error once it read them.
    token = feed._token
    assert feed.answer({"token": token, "op": "latest", "start": 0}) == 2
    assert _ids(feed.answer({"token": token, "op": "read", "start": 0, "end": 2})) == [1, 2]
    with pytest.raises(RuntimeError, match="source broke"):
        feed.answer({"token": token, "op": "latest", "start": 2})
    with pytest.raises(PermissionError):
        feed.answer({"token": "guessed", "op": "read", "start": 0, "end": 2})
    await feed.aclose()


async def test_a_source_that_cannot_replay_names_the_rows_it_lost(spark: Any) -> None:
    feed = to_spark_stream(Flux.range(0, 10).map(lambda i: (i,)), spark, schema="id long")
    # What a query restarted from its checkpoint asks first when its last planned
    # micro-batch (rows 100..199) was not committed before the driver died.
    with pytest.raises(LookupError, match=r"^rows 100\.\.199 were in a micro-batch planned before"):
        feed.answer({"token": feed._token, "op": "read", "start": 100, "end": 200})
    await feed.aclose()


async def test_arrow_batches_land_once_in_a_file_sink(spark: Any, tmp_path: Path) -> None:
    table = pa.table(
        {"id": pa.array(range(30_000), pa.int64()), "s": [str(i) for i in range(30_000)]}
    )

    def replay(start: int) -> Flux[Any]:
        return Flux.from_iterable(table.slice(start).to_batches(max_chunksize=1_000))

    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    # A query stopped mid-stream, then one restarted from its checkpoint with a new feed.
    for stop_after in (10_000, None):
        feed = to_spark_stream(replay, spark, schema="id long, s string", capacity=20_000)
        writer = feed.df.writeStream.format("parquet").option("checkpointLocation", str(checkpoint))
        query = await asyncio.to_thread(writer.start, str(out))
        try:
            if stop_after is None:
                await feed.completed(query)
                await asyncio.to_thread(query.processAllAvailable)
            else:
                while feed.rows_committed < stop_after:  # noqa: ASYNC110
                    await asyncio.sleep(0.05)
        finally:
            await asyncio.to_thread(query.stop)
            await feed.aclose()
    assert feed.start is not None
    assert feed.start >= 10_000  # the restart resumed where the checkpoint said
    landed = await asyncio.to_thread(lambda: spark.read.parquet(str(out)).toArrow())
    assert sorted(landed.column("id").to_pylist()) == list(range(30_000))
    assert landed.column("s").to_pylist() == [str(i) for i in landed.column("id").to_pylist()]


def test_a_restarted_driver_loses_and_duplicates_nothing(spark: Any, tmp_path: Path) -> None:
    out, checkpoint, total = tmp_path / "out", tmp_path / "checkpoint", 12_000
    command = [sys.executable, "-m", "tests.spark.feed_job", str(out), str(checkpoint), str(total)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    committed = checkpoint / "commits"
    # Kill -9 once two micro-batches are committed: mid-stream, usually with one planned.
    crash_when(
        command, env, tmp_path / "first.log", lambda: len(list(committed.glob("[0-9]*"))) >= 2
    )
    assert len(list(committed.glob("[0-9]*"))) < total // 3_000, "the kill came too late"
    second = subprocess.run(
        command, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert second.returncode == 0, second.stderr[-3000:]
    ids = spark.read.parquet(str(out)).toArrow().column("id").to_pylist()
    assert sorted(ids) == list(range(total))


def _endless_rows(cancelled: asyncio.Event) -> Flux[Any]:
    """Rows without end (the query must die first), recording the cancel of upstream."""
    return Flux.range(0, 2**62).map(lambda i: (i,)).do_on_cancel(cancelled.set)


async def test_a_query_that_fails_mid_stream_fails_the_wait(spark: Any) -> None:
    cancelled = asyncio.Event()
    feed = to_spark_stream(_endless_rows(cancelled), spark, schema="id long", capacity=2_000)

    def fail_the_second_batch(frame: Any, epoch: int) -> None:
        if epoch >= 1:
            raise ValueError(f"the sink broke at micro-batch {epoch}")

    writer = feed.df.writeStream.foreachBatch(fail_the_second_batch).queryName("failing_feed")
    query = await asyncio.to_thread(writer.start)
    try:
        # The bound turns a hang into a failure; it is not a speed assertion.
        with pytest.raises(
            RuntimeError, match=r"'failing_feed' \(id .*\) reading the feed failed"
        ) as failed:
            await asyncio.wait_for(feed.completed(query), 60)
    finally:
        await asyncio.to_thread(query.stop)
        await feed.aclose()
    assert cancelled.is_set()
    assert isinstance(failed.value.__cause__, StreamingQueryException)
    assert "the sink broke at micro-batch 1" in str(failed.value.__cause__)


@pytest.mark.asyncio(loop_factories=BOTH_LOOPS)
async def test_a_query_stopped_mid_stream_ends_the_wait(spark: Any) -> None:
    cancelled = asyncio.Event()
    feed = to_spark_stream(_endless_rows(cancelled), spark, schema="id long", capacity=2_000)
    query = await asyncio.to_thread(feed.df.writeStream.format("noop").start)
    try:
        waiting = asyncio.ensure_future(feed.completed(query))
        while feed.rows_committed == 0:  # noqa: ASYNC110
            await asyncio.sleep(0.05)
        await asyncio.to_thread(query.stop)
        with pytest.raises(
            RuntimeError, match=r"\(id .*\) reading the feed stopped without an error before"
        ) as stopped:
            await asyncio.wait_for(waiting, 60)
    finally:
        await asyncio.to_thread(query.stop)
        feed.close()  # the plain close works on a feed whose query is gone, too
        await feed.aclose()
    assert cancelled.is_set()
    assert stopped.value.__cause__ is None


async def test_a_query_that_ended_before_the_wait_fails_it_at_once(spark: Any) -> None:
    cancelled = asyncio.Event()
    feed = to_spark_stream(_endless_rows(cancelled), spark, schema="id long", capacity=2_000)
    query = await asyncio.to_thread(feed.df.writeStream.format("noop").start)
    await asyncio.to_thread(query.stop)
    try:
        with pytest.raises(RuntimeError, match="stopped without an error before the source ended"):
            await asyncio.wait_for(feed.completed(query), 60)
    finally:
        await feed.aclose()
    assert cancelled.is_set()
