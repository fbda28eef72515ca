"""One local SparkSession for the Spark suites (the bridge here, the pipeline in tests/pipeline),
and, on demand, a standalone cluster and a Spark Connect server with a client session on it.

``tests/pipeline/conftest.py`` re-exports these hooks and fixtures, so both folders run on the
same session (`spark_session` returns the one that is already up).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import uvloop

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

from reactive_aio.pipeline._flights import load_raw
from reactive_aio.spark import spark_session
from reactive_aio.spark._cluster import SparkConnectServer, StandaloneCluster

SPARK_FOLDERS = (Path(__file__).parent, Path(__file__).parent.parent / "pipeline")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if Path(str(item.fspath)).parent in SPARK_FOLDERS:
            item.add_marker(pytest.mark.spark)
            # Starting the JVM (in the first test's fixture) and the cluster take tens of
            # seconds on a busy 2-core machine; the project default of 120 s is too tight.
            item.add_marker(pytest.mark.timeout(600))


def pytest_asyncio_loop_factories(
    config: pytest.Config, item: pytest.Item
) -> dict[str, Callable[[], asyncio.AbstractEventLoop]]:
    """Spark tests run on asyncio only, unless they opt in to both loops.

    Every Spark job costs seconds on a busy machine, and most of these tests exercise Spark,
    not the loop. Tests whose behaviour depends on the loop (worker threads handing batches
    over with ``call_soon_threadsafe``, cancellation from a helper thread, streaming
    hand-over) opt in with ``@pytest.mark.asyncio(loop_factories=BOTH_LOOPS)``.
    """
    marker = item.get_closest_marker("asyncio")
    if marker is not None and "loop_factories" in marker.kwargs:
        return {"asyncio": asyncio.new_event_loop, "uvloop": uvloop.new_event_loop}
    return {"asyncio": asyncio.new_event_loop}


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


@pytest.fixture(scope="session")
def connect_server() -> Iterator[SparkConnectServer]:
    """A Spark Connect server started from PySpark's own jars on 127.0.0.1, stopped by its pid."""
    with SparkConnectServer(master="local[2]") as server:
        yield server
        pid, log_dir = server.pid, server.log_dir
    assert pid is not None
    assert log_dir is not None
    with pytest.raises(ProcessLookupError):  # the whole process group ended, the JVM included
        os.killpg(pid, 0)
    assert not log_dir.exists()


@pytest.fixture(scope="session")
def connect_spark(connect_server: SparkConnectServer) -> Iterator[Any]:
    """A Spark Connect client session on `connect_server`.

    Built with the Connect builder itself rather than ``spark_session(url)``: PySpark's generic
    builder switches the whole process into Connect mode (``pyspark.sql.functions`` would then
    build Connect columns for the classic session the other tests share). Tests on this
    session therefore use SQL strings, not ``pyspark.sql.functions``.
    """
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    session = ConnectSession.builder.remote(connect_server.url).create()
    yield session
    session.stop()
