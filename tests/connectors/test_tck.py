"""The TCK over the PostgreSQL cursor source and the COPY sink."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, ClassVar

import asyncpg
import pytest

from reactive_aio import Publisher, Subscriber
from reactive_aio.connectors.postgres import PostgresSink, from_query, to_postgres
from reactive_aio.connectors.servers import LocalPostgres
from reactive_aio.tck import PublisherVerification, SubscriberBlackboxVerification, TestEnvironment

from .conftest import unique


def _env() -> TestEnvironment:
    # Every subscription opens a connection (a few ms, more on a busy machine): expected
    # signals may take a while; the windows in which nothing may arrive stay short.
    return TestEnvironment(timeout=10.0, no_signals_timeout=0.1, poll_timeout=0.02, scale=1)


class TestFromQuery(PublisherVerification[int]):
    dsn = ""

    @pytest.fixture(autouse=True)
    def _server(self, postgres: LocalPostgres) -> None:
        type(self).dsn = postgres.dsn

    def create_env(self) -> TestEnvironment:
        return _env()

    def create_publisher(self, elements: int) -> Publisher[int]:
        # generate_series in the select list is produced row by row, so the TCK's
        # 2**31 - 1 element stream costs only what is fetched.
        return from_query(
            self.dsn,
            "SELECT generate_series(0, $1::bigint - 1)",
            elements,
            fetch_size=64,
            record=lambda row: int(row[0]),
        )

    def create_failed_publisher(self) -> Publisher[int] | None:
        return from_query(self.dsn, "SELECT * FROM a_table_that_does_not_exist")


class TestToPostgres(SubscriberBlackboxVerification[tuple[int]]):
    dsn = ""
    table = ""
    sinks: ClassVar[list[PostgresSink[Any]]] = []

    @pytest.fixture(autouse=True)
    async def _server(self, postgres: LocalPostgres) -> AsyncIterator[None]:
        cls = type(self)
        if cls.dsn != postgres.dsn:
            cls.dsn = postgres.dsn
            cls.table = unique("tck")
            connection = await asyncpg.connect(postgres.dsn)
            await connection.execute(f"CREATE TABLE {cls.table} (n bigint)")
            await connection.close()
        cls.sinks = []
        yield
        # the TCK's streams never end: close the writers before the leak check runs
        await asyncio.gather(*(sink.aclose() for sink in cls.sinks))

    def create_env(self) -> TestEnvironment:
        return _env()

    def create_subscriber(self) -> Subscriber[tuple[int]]:
        sink: PostgresSink[tuple[int]] = to_postgres(
            self.dsn, self.table, ["n"], batch_size=4, max_latency=0.01
        )
        type(self).sinks.append(sink)
        return sink

    def create_element(self, element: int) -> tuple[int]:
        return (element,)
