"""from_dataframe against a real local Spark (to_spark: test_sink.py)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pyarrow as pa
import pytest

from reactive_aio.spark import ArrowBatchReader, from_dataframe
from reactive_aio.testing import TestSubscriber

BOTH_LOOPS = ["asyncio", "uvloop"]


@pytest.mark.parametrize("path", ["stream", "partition"])
def test_reader_streams_every_row_in_bounded_batches(spark: Any, path: str) -> None:
    # An empty partition among full ones, and partitions that are not multiples of a batch.
    df = spark.range(0, 25_000, numPartitions=3).union(spark.range(0, 0, numPartitions=1))
    df = df.union(spark.range(25_000, 26_000, numPartitions=1)).selectExpr(
        "id", "cast(id as string) AS s"
    )
    with ArrowBatchReader(df, batch_rows=4_000, path=path) as reader:  # type: ignore[arg-type]
        batches = list(reader)
    assert reader.chosen_path == path
    assert all(0 < b.num_rows <= 4_000 for b in batches)
    ids = pa.concat_arrays([b.column("id") for b in batches]).to_pylist()
    assert ids == list(range(26_000))
    assert pa.concat_arrays([b.column("s") for b in batches]).to_pylist()[-1] == "25999"


async def test_a_partition_too_big_for_the_driver_still_gives_its_first_rows(spark: Any) -> None:
    # Five billion rows per partition: collecting one whole would kill the driver.
    huge = spark.range(0, 10**10, numPartitions=2)
    rows = await from_dataframe(huge, batch_rows=1_000, as_="rows").take(1_000).to_list()
    assert rows == [{"id": i} for i in range(1_000)]


@pytest.mark.asyncio(loop_factories=BOTH_LOOPS)
async def test_from_dataframe_emits_only_what_is_requested(spark: Any) -> None:
    df = spark.range(0, 10_000, numPartitions=2)
    subscriber = TestSubscriber[Any](initial_request=1)
    from_dataframe(df, batch_rows=1_000).subscribe(subscriber)
    await subscriber.wait_for_values(1, timeout=120)
    assert subscriber.values[0].num_rows == 1_000
    subscription: Any = subscriber.subscription
    # One batch was asked for: the worker holds no permit to fetch another.
    assert len(subscriber.values) == 1
    assert subscription._granted == 0
    assert not subscription._queue
    subscription.request(2)
    await subscriber.wait_for_values(3, timeout=120)
    assert [b.num_rows for b in subscriber.values] == [1_000] * 3
    subscription.cancel()


async def test_from_dataframe_as_rows(spark: Any) -> None:
    df = spark.range(0, 2_500).selectExpr("id", "id % 7 AS m")
    rows = await from_dataframe(df, batch_rows=1_000, as_="rows").to_list()
    assert rows == [{"id": i, "m": i % 7} for i in range(2_500)]


async def test_from_dataframe_reports_a_failing_job(spark: Any) -> None:
    df = spark.range(0, 10).selectExpr("assert_true(id < 5) AS ok")
    with pytest.raises(Exception, match="id < 5"):
        await from_dataframe(df).to_list()


@pytest.mark.asyncio(loop_factories=BOTH_LOOPS)
async def test_cancel_stops_the_spark_job(spark: Any) -> None:
    sc = spark.sparkContext
    # A job that would run for hours: hashing an endless range, keeping nothing.
    slow = (
        spark.range(0, 10**13, numPartitions=1)
        .selectExpr("sha2(cast(id AS string), 256) AS h")
        .filter("h = 'never'")
    )
    disposable = from_dataframe(slow).subscribe(on_next=lambda batch: None)
    # Spark's status tracker is polled: it offers no event to wait on.
    while not sc.statusTracker().getActiveJobsIds():  # noqa: ASYNC110
        await asyncio.sleep(0.05)
    disposable.dispose()
    # The job would run for hours: it ending at all shows the cancel reached Spark. The bound
    # is only there so a regression fails instead of hanging (typically 0.1-0.3 s).
    deadline = time.monotonic() + 60
    while sc.statusTracker().getActiveJobsIds():
        assert time.monotonic() < deadline, "the Spark job is still running after the cancel"
        await asyncio.sleep(0.05)
