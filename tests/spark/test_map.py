"""spark_map: a DataFrame function per micro-batch, in order, bounded by demand."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest

from reactive_aio import Flux
from reactive_aio.spark import spark_map
from reactive_aio.testing import TestSubscriber


def _batches(total: int, size: int) -> list[Any]:
    return [
        pa.record_batch({"id": list(range(i, min(i + size, total)))}) for i in range(0, total, size)
    ]


async def test_results_flow_in_order(spark: Any) -> None:
    doubled = Flux.from_iterable(_batches(5_000, 250)).pipe(
        spark_map(lambda df: df.selectExpr("id * 2 AS twice"), spark=spark, batch_rows=1_000)
    )
    tables = await doubled.to_list()
    assert [t.num_rows for t in tables] == [1_000] * 5
    values = [v for t in tables for v in t.column("twice").to_pylist()]
    assert values == [2 * i for i in range(5_000)]


async def test_demand_bounds_the_micro_batches(spark: Any) -> None:
    subscriber = TestSubscriber[Any](initial_request=1)
    source = _batches(10_000, 500)
    Flux.from_iterable(source).pipe(
        spark_map(lambda df: df.groupBy().count(), spark=spark, batch_rows=1_000)
    ).subscribe(subscriber)
    await subscriber.wait_for_values(1, timeout=120)
    subscription: Any = subscriber.subscription
    # One result was asked for: at most the next micro-batch is gathered, no more.
    assert subscription._items_seen <= 4
    subscriber.cancel()


async def test_a_failing_function_ends_the_stream_with_its_error(spark: Any) -> None:
    failing = Flux.from_iterable(_batches(3_000, 500)).pipe(
        spark_map(lambda df: df.selectExpr("no_such_column"), spark=spark, batch_rows=1_000)
    )
    with pytest.raises(Exception, match="no_such_column"):
        await failing.to_list()


async def test_an_upstream_error_follows_the_results_before_it(spark: Any) -> None:
    source = Flux.from_iterable(_batches(1_000, 500)).concat_with(Flux.error(ValueError("boom")))
    subscriber = TestSubscriber[Any](initial_request=10)
    source.pipe(spark_map(lambda df: df.selectExpr("id"), spark=spark, batch_rows=1_000)).subscribe(
        subscriber
    )
    await subscriber.wait_terminated(timeout=120)
    # The micro-batch gathered before the error is still processed and delivered.
    assert [t.num_rows for t in subscriber.values] == [1_000]
    assert [str(e) for e in subscriber.errors] == ["boom"]


async def test_unbounded_demand_pulls_no_more_than_the_window(spark: Any) -> None:
    pulled = delivered = 0
    ahead: list[int] = []

    def source() -> Iterator[Any]:
        nonlocal pulled
        for batch in _batches(20_000, 500):
            pulled += batch.num_rows
            ahead.append(pulled - delivered)
            yield batch

    def on_next(table: Any) -> None:
        nonlocal delivered
        delivered += table.num_rows

    subscriber = TestSubscriber[Any](initial_request=2**63 - 1, on_next_callback=on_next)
    Flux.from_iterable(source()).pipe(
        spark_map(lambda df: df.selectExpr("id"), spark=spark, batch_rows=1_000)
    ).subscribe(subscriber)
    await subscriber.wait_terminated(timeout=300)
    assert delivered == 20_000
    # One micro-batch in its job and one being gathered: never the whole input, however
    # fast the source and however large the demand.
    assert max(ahead) <= 2 * 1_000
