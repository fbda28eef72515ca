"""Clients of the suite's nats-server and PostgreSQL (``tests/conftest.py`` starts them from the
installed wheels on 127.0.0.1 and free ports, and stops them by their pids at the end)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import nats
import pytest
from nats.aio.client import Client
from nats.js import JetStreamContext

from reactive_aio.connectors.servers import LocalNatsServer, LocalPostgres

FOLDER = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if Path(str(item.fspath)).parent == FOLDER:
            item.add_marker(pytest.mark.brokers)


@pytest.fixture(autouse=True)
async def network_close() -> AsyncIterator[None]:
    """Give connections closed at the end of a test the network round trips they need.

    Closing a connection (after a cancel, or a TCK test that never completes its stream) takes
    real time, not a few loop turns; the suite-wide leak check runs after this, so a task that
    never ends still fails the test.
    """
    yield
    me = asyncio.current_task()
    deadline = asyncio.get_running_loop().time() + 10
    while asyncio.get_running_loop().time() < deadline:
        if all(t is me or t.done() for t in asyncio.all_tasks()):
            return
        await asyncio.sleep(0.01)


def unique(prefix: str) -> str:
    """A name no other test uses (streams, consumers, tables)."""
    return f"{prefix}_{uuid.uuid4().hex[:10]}"


@pytest.fixture
async def nc(nats_server: LocalNatsServer) -> AsyncIterator[Client]:
    client = await nats.connect(nats_server.url)
    yield client
    await client.close()


@pytest.fixture
async def js(nc: Client) -> JetStreamContext:
    return nc.jetstream()


@pytest.fixture
async def stream(js: JetStreamContext) -> AsyncIterator[str]:
    """A fresh stream capturing ``<name>.>``; its name is also its subject prefix."""
    name = unique("S")
    await js.add_stream(name=name, subjects=[f"{name}.>"])
    yield name
    await js.delete_stream(name)


@pytest.fixture
async def pg(postgres: LocalPostgres) -> AsyncIterator[asyncpg.Connection]:
    connection = await asyncpg.connect(postgres.dsn)
    yield connection
    await connection.close()
