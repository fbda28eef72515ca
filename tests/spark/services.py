"""The Spark services of the whole run, as session fixtures: one local SparkSession, and on
demand one standalone cluster and one Spark Connect server with a client session on it.

A plugin of the top-level ``tests/conftest.py`` rather than fixtures of ``tests/spark/conftest.py``:
a fixture a second conftest imports is a second fixture with its own cache, so the bridge's
and the pipeline's suites would each start a cluster and a Connect server of their own.
Registered once here, every folder shares the same JVMs.

The cluster and the Connect server take tens of seconds to come up and mostly wait while they
do. Once collection shows that some test will use one, it starts in a helper thread, so that
its start overlaps the tests that run before the first one needing it; the fixture waits for
it. Both are stopped by their pids when the fixture ends, or at the end of the run if no test
got to use them (``-x``, an interrupted run).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from typing import Any

import attrs
import pytest

from reactive_aio.spark._cluster import SparkConnectServer, StandaloneCluster


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    from reactive_aio.spark import spark_session

    session = spark_session("local[2]", app_name="reactive_aio tests")
    yield session
    session.stop()


@attrs.define
class _Starting:
    """A service being started in a helper thread."""

    service: StandaloneCluster | SparkConnectServer
    _thread: threading.Thread | None = None
    _error: BaseException | None = None

    def begin(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._start, name="starting Spark service")
            self._thread.start()

    def _start(self) -> None:
        try:
            self.service.start()
        except BaseException as exc:  # raised again by wait(), in the test that needs it
            self._error = exc

    def join(self) -> None:
        if self._thread is not None:
            self._thread.join()

    def wait(self) -> None:
        """Return once the service is up (starting it now if nobody did); raise why it is not."""
        self.begin()
        self.join()
        if self._error is not None:
            raise self._error

    def stop(self) -> None:
        """Stop what was started, by pid (idempotent)."""
        self.join()
        self.service.stop()


_SERVICES = {
    "standalone_cluster": _Starting(
        StandaloneCluster(workers=2, worker_cores=1, worker_memory="1g")
    ),
    "connect_server": _Starting(SparkConnectServer(master="local[2]")),
}


def pytest_collection_finish(session: pytest.Session) -> None:
    if session.config.option.collectonly:
        return
    needed = {name for item in session.items for name in getattr(item, "fixturenames", ())}
    for name, starting in _SERVICES.items():
        if name in needed:
            starting.begin()


def pytest_sessionfinish() -> None:
    for starting in _SERVICES.values():
        starting.stop()


def wait_for_services() -> None:
    """Let the services being started finish starting (their files open, their threads end)."""
    for starting in _SERVICES.values():
        starting.join()


@pytest.fixture(scope="session")
def standalone_cluster() -> Iterator[StandaloneCluster]:
    starting = _SERVICES["standalone_cluster"]
    starting.wait()
    assert isinstance(starting.service, StandaloneCluster)
    yield starting.service
    starting.stop()


@pytest.fixture(scope="session")
def connect_server() -> Iterator[SparkConnectServer]:
    """A Spark Connect server started from PySpark's own jars on 127.0.0.1, stopped by its pid."""
    starting = _SERVICES["connect_server"]
    starting.wait()
    server = starting.service
    assert isinstance(server, SparkConnectServer)
    yield server
    pid, log_dir = server.pid, server.log_dir
    starting.stop()
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
