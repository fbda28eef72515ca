"""The pipeline runs on Spark: the same session, markers and loops as the bridge's suite."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

from tests.spark.conftest import (
    connect_server as connect_server,
    connect_spark as connect_spark,
    pytest_asyncio_loop_factories as pytest_asyncio_loop_factories,
    pytest_collection_modifyitems as pytest_collection_modifyitems,
    raw_flights as raw_flights,
    spark as spark,
    standalone_cluster as standalone_cluster,
)
