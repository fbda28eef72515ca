"""The TCK over the PostgreSQL cursor source and the COPY sink, and over the JetStream source
and sink."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, ClassVar

import asyncpg
import nats
import pytest

from reactive_aio import Publisher, Subscriber
from reactive_aio.connectors import Backoff
from reactive_aio.connectors.nats import (
    JetStreamMessage,
    JetStreamSink,
    from_jetstream,
    to_jetstream,
)
from reactive_aio.connectors.postgres import PostgresSink, from_query, to_postgres
from reactive_aio.connectors.servers import LocalNatsServer, LocalPostgres
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


TCK_SIZES = (0, 1, 2, 3, 5, 6, 10, 20)
"""The stream lengths the publisher tests ask for (none asks for more than 20 but the lazy
2**31 - 1 ones, which a broker cannot hold: they skip)."""


class TestFromJetStream(PublisherVerification[JetStreamMessage[bytes]]):
    url = ""
    prefix = ""

    @pytest.fixture(autouse=True)
    async def _server(self, nats_server: LocalNatsServer) -> None:
        cls = type(self)
        if cls.url != nats_server.url:
            # One stream per length, each read through a durable of its own per publisher.
            cls.url, cls.prefix = nats_server.url, unique("TCK")
            client = await nats.connect(nats_server.url)
            js = client.jetstream()
            for size in TCK_SIZES:
                name = f"{cls.prefix}_{size}"
                await js.add_stream(name=name, subjects=[f"{name}.>"])
                for i in range(size):
                    await js.publish(f"{name}.x", str(i).encode())
            await client.close()

    def create_env(self) -> TestEnvironment:
        return _env()

    def max_elements_from_publisher(self) -> int:
        return max(TCK_SIZES)

    def create_publisher(self, elements: int) -> Publisher[JetStreamMessage[bytes]]:
        return from_jetstream(
            self.url,
            f"{self.prefix}_{elements}",
            unique("d"),
            ack="on_delivery",
            stop_when_drained=True,
            fetch_timeout=0.1,
        )

    def create_failed_publisher(self) -> Publisher[JetStreamMessage[bytes]] | None:
        # nobody listens there: on_subscribe, then ConnectionLostError without a retry
        return from_jetstream(LocalNatsServer().url, "S", "d", backoff=Backoff(attempts=0))


class TestToJetStream(SubscriberBlackboxVerification[bytes]):
    url = ""
    subject = ""
    sinks: ClassVar[list[JetStreamSink[bytes]]] = []

    @pytest.fixture(autouse=True)
    async def _server(self, nats_server: LocalNatsServer) -> AsyncIterator[None]:
        cls = type(self)
        if cls.url != nats_server.url:
            name = unique("TCKSINK")
            cls.url, cls.subject = nats_server.url, f"{name}.x"
            client = await nats.connect(nats_server.url)
            await client.jetstream().add_stream(name=name, subjects=[f"{name}.>"])
            await client.close()
        cls.sinks = []
        yield
        # the TCK's streams never end: close the publishers before the leak check runs
        await asyncio.gather(*(sink.aclose() for sink in cls.sinks))

    def create_env(self) -> TestEnvironment:
        return _env()

    def create_subscriber(self) -> Subscriber[bytes]:
        sink: JetStreamSink[bytes] = to_jetstream(self.url, self.subject, max_in_flight=4)
        type(self).sinks.append(sink)
        return sink

    def create_element(self, element: int) -> bytes:
        return str(element).encode()
