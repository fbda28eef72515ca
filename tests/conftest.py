"""Every async test runs on the default asyncio loop and on uvloop, under a leak check; one
nats-server and one PostgreSQL for the suites that need a broker (the connectors' and the
application's), and one of each Spark service for the suites on Spark (`tests.spark.services`)."""

from __future__ import annotations

import asyncio
import gc
import os
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import uvloop

from reactive_aio.connectors.servers import LocalNatsServer, LocalPostgres

pytest_plugins = ("tests.spark.services",)

# The application is a package of its own in app/. The working directory puts this checkout's
# library first on the path; this puts its application first too, for the tests and for the
# processes they start (`python -m reactive_aio_app`), so that a checkout tests its own code
# even in a virtual environment whose editable install points at another checkout.
_APP = str(Path(__file__).resolve().parents[1] / "app")
sys.path.insert(0, _APP)
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, (_APP, os.environ.get("PYTHONPATH"))))


def pytest_asyncio_loop_factories(
    config: pytest.Config, item: pytest.Item
) -> dict[str, Callable[[], asyncio.AbstractEventLoop]]:
    return {"asyncio": asyncio.new_event_loop, "uvloop": uvloop.new_event_loop}


_SETTLE_ROUNDS = 50
"""Loop iterations a test's leftovers get to finish (closing iterators, cancelled pumps)."""


@pytest.fixture(autouse=True)
async def no_leaks(request: pytest.FixtureRequest) -> AsyncIterator[None]:
    """Fail a test that leaves a task running or an exception nobody retrieved.

    Tasks still pending after the test (and a few loop iterations for clean-up work such as
    ``aclose()`` of cancelled iterators) mean some subscription was never cancelled or some
    pump never stopped; "never retrieved" errors mean a failure was silently lost. A test
    marked ``driver_drops_failed_future(error_type, reason)`` lets through the futures of that
    error a client library drops inside itself, out of our reach (the reason names its bug).
    """
    loop = asyncio.get_running_loop()
    lost: list[dict[str, Any]] = []
    previous = loop.get_exception_handler()
    marker = request.node.get_closest_marker("driver_drops_failed_future")
    dropped_by_driver: type[BaseException] | tuple[()] = marker.args[0] if marker else ()

    def handler(the_loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        message = str(context.get("message", ""))
        if "never retrieved" in message and not isinstance(
            context.get("exception"), dropped_by_driver
        ):
            lost.append(context)
        if previous is not None:
            previous(the_loop, context)
        else:
            the_loop.default_exception_handler(context)

    loop.set_exception_handler(handler)
    yield
    me = asyncio.current_task()
    for _ in range(_SETTLE_ROUNDS):
        pending = [t for t in asyncio.all_tasks() if t is not me and not t.done()]
        if not pending:
            break
        await asyncio.sleep(0)
    gc.collect(1)  # finalizers of dropped futures in cycles report "never retrieved" here
    await asyncio.sleep(0)
    if loop.get_exception_handler() is handler:
        loop.set_exception_handler(previous)
    assert not pending, f"tasks left running after the test: {pending}"
    assert not lost, f"exceptions never retrieved: {[c.get('exception') for c in lost]}"


@pytest.fixture(scope="session")
def nats_server() -> Iterator[LocalNatsServer]:
    """``nats-server -js`` from the installed wheel on 127.0.0.1 and a free port."""
    with LocalNatsServer() as server:
        yield server


@pytest.fixture(scope="session")
def postgres() -> Iterator[LocalPostgres]:
    """PostgreSQL from the installed wheel on 127.0.0.1 and a free port (no fsync: tests only)."""
    with LocalPostgres(fsync=False) as server:
        yield server


def pytest_collection_finish(session: pytest.Session) -> None:
    """Move what collection built (modules, thousands of test items and their parameters), all
    alive to the end of the run, out of the cyclic collector's sight: a full ``gc.collect()``
    in a test (the TCK's reference checks of rules 1.6 and 3.13) then scans what the tests
    made, not the whole run. Garbage made from here on is found as before."""
    gc.collect()
    gc.freeze()
