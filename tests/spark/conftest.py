"""One local SparkSession for the whole spark suite, and a standalone cluster on demand."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

from reactive_aio.spark import spark_session
from reactive_aio.spark._cluster import StandaloneCluster
from reactive_aio.spark._flights import load_raw


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.spark)
            # Starting the JVM (in the first test's fixture) and the cluster take tens of
            # seconds on a busy 2-core machine; the project default of 120 s is too tight.
            item.add_marker(pytest.mark.timeout(600))


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    session = spark_session("local[2]", app_name="reactive_aio tests")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def raw_flights() -> Any:
    """The real data set as raw records, ordered by scheduled departure."""
    table, rejected = load_raw()
    assert rejected.num_rows == 0
    return table


@pytest.fixture(scope="session")
def standalone_cluster() -> Iterator[StandaloneCluster]:
    with StandaloneCluster(workers=2, worker_cores=1, worker_memory="1g") as cluster:
        yield cluster
