"""Markers, loops and the resource check of the Spark suites (the bridge here, the application's
pipeline in tests/app/pipeline, which re-exports the hooks). The Spark services themselves, shared by every
folder, are in `tests.spark.services`.
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import uvloop

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

from .services import wait_for_services

SPARK_FOLDERS = (Path(__file__).parent, Path(__file__).parent.parent / "app" / "pipeline")


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


def _service_ports() -> set[int]:
    """Ports of PySpark's own process-wide servers that the JVM connects to when it likes.

    py4j's Python server (Java → Python calls, e.g. ``foreachBatch``: one thread and socket per
    pooled connection) and the accumulator server (one persistent connection after the first
    Python task). They belong to the session, not to any bridge component.
    """
    from pyspark import SparkContext

    ports: set[int] = set()
    sc = SparkContext._active_spark_context
    accumulators: Any = None if sc is None else sc._accumulatorServer
    if accumulators is not None:
        ports.add(int(accumulators.server_address[1]))
    # The gateway (and its callback server) outlives spark.stop(), which the session fixture
    # runs in the teardown of whichever test comes last. It forwards unknown attributes to
    # the JVM: look in its own dictionary.
    gateway: Any = SparkContext._gateway
    if gateway is None:
        return ports
    for name in ("_python_server", "_callback_server"):
        server = gateway.__dict__.get(name)
        if server is not None and getattr(server, "server_socket", None) is not None:
            ports.add(int(server.server_socket.getsockname()[1]))
    return ports


def _is_service_thread(thread: threading.Thread) -> bool:
    target = getattr(thread, "_target", None)
    owner = getattr(target, "__self__", None)
    return type(owner).__module__.startswith("py4j.")


def _resources() -> tuple[set[threading.Thread], dict[int, str]]:
    """Live threads and open descriptors, less those of PySpark's process-wide servers."""
    threads = {t for t in threading.enumerate() if t.is_alive() and not _is_service_thread(t)}
    ports = _service_ports()
    fds: dict[int, str] = {}
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd <= 2:  # pytest's output capture points these elsewhere per test phase
            continue
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # closed meanwhile (the listing's own descriptor, among others)
            continue
        if target.startswith("socket:"):
            try:
                with socket.socket(fileno=os.dup(fd)) as probe:
                    address: Any = probe.getsockname()
            except OSError:
                address = None
            if isinstance(address, tuple) and int(address[1]) in ports:
                continue
            target += f" {address}->{_peer(fd)}"
        fds[fd] = target
    return threads, fds


def _peer(fd: int) -> Any:
    try:
        with socket.socket(fileno=os.dup(fd)) as probe:
            return probe.getpeername()
    except OSError:
        return None


_BASELINE = pytest.StashKey[tuple[set[threading.Thread], dict[int, str]]]()


@pytest.fixture(autouse=True)
def resources_baseline(request: pytest.FixtureRequest) -> None:
    """Record the threads and descriptors before the test (session fixtures already up, and
    services started in the background done starting)."""
    wait_for_services()
    request.node.stash[_BASELINE] = _resources()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    """After every fixture is torn down (the event loop closed), every bridge component must
    have given back its threads and file descriptors. Helper threads (a cancel, a py4j
    release) end asynchronously, so the check waits a little before it fails, naming what
    is left."""
    result = yield
    baseline = item.stash.get(_BASELINE, None)
    if baseline is None:
        return result
    threads, fds = baseline
    deadline = time.monotonic() + 20
    while True:
        now_threads, now_fds = _resources()
        extra_threads = now_threads - threads
        extra_fds = {fd: t for fd, t in now_fds.items() if fds.get(fd) != t}
        if not extra_threads and not extra_fds:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(
                f"left behind: threads {sorted(t.name for t in extra_threads)}, "
                f"file descriptors {extra_fds}"
            )
        time.sleep(0.05)
