"""The Spark services of the whole run, as session fixtures: one local SparkSession, and on
demand one standalone cluster and one Spark Connect server with a client session on it.

A plugin of the top-level ``tests/conftest.py`` rather than fixtures of ``tests/spark/conftest.py``:
a fixture a second conftest imports is a second fixture with its own cache, so the bridge's
and the pipeline's suites would each start a cluster and a Connect server of their own.
Registered once here, every folder shares the same JVMs.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from reactive_aio.spark._cluster import SparkConnectServer, StandaloneCluster


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    from reactive_aio.spark import spark_session

    session = spark_session("local[2]", app_name="reactive_aio tests")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def raw_flights() -> Any:
    """The real data set as raw records, ordered by scheduled departure."""
    from reactive_aio.pipeline._flights import load_raw

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
    session.range(1).collect()  # gRPC connects lazily: before the tests' resource baselines
    yield session
    session.stop()
