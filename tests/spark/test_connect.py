"""The bridge through Spark Connect: a server started from PySpark's own jars, a gRPC client."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from reactive_aio.spark import from_dataframe
from reactive_aio.spark._cluster import SparkConnectServer


def test_the_server_runs_where_the_fixture_says(connect_server: SparkConnectServer) -> None:
    assert connect_server.url.startswith("sc://127.0.0.1:")
    assert connect_server.pid is not None


async def test_from_dataframe_reads_through_connect(connect_spark: Any) -> None:
    df = connect_spark.range(0, 25_000, numPartitions=3).selectExpr("id", "cast(id AS string) AS s")
    batches = await from_dataframe(df, batch_rows=4_000).to_list()
    assert all(b.num_rows <= 4_000 for b in batches)
    ids = pa.concat_arrays([b.column("id") for b in batches]).to_pylist()
    assert ids == list(range(25_000))
