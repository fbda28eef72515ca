"""from_query, to_postgres and listen against a real PostgreSQL."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections import OrderedDict, UserDict
from collections.abc import AsyncIterator, Callable, Sequence
from types import MappingProxyType
from typing import Any, NamedTuple

import asyncpg
import pytest

from reactive_aio import MAX_DEMAND, Flux, NullSignalError, Overflow, snapshot
from reactive_aio.connectors import Backoff, ConnectionLostError
from reactive_aio.connectors.postgres import (
    COMMITS_TABLE,
    DEAD_LETTER_COLUMNS,
    PostgresSink,
    PostgresWriteError,
    committed_positions,
    from_query,
    listen,
    to_postgres,
)
from reactive_aio.connectors.servers import LocalPostgres
from reactive_aio.lowlevel import LoopBound
from reactive_aio.testing import TestSubscriber

from .conftest import unique

BILLION = "SELECT generate_series(1, 1000000000) AS n"  # ProjectSet: produced row by row


async def client_backends(pg: asyncpg.Connection) -> int:
    count = await pg.fetchval(
        "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'"
    )
    return int(count)


async def settle_backends(pg: asyncpg.Connection, expected: int) -> None:
    for _ in range(200):
        if await client_backends(pg) == expected:
            return
        await asyncio.sleep(0.02)
    assert await client_backends(pg) == expected


async def test_from_query_fetches_by_demand(
    postgres: LocalPostgres, pg: asyncpg.Connection
) -> None:
    baseline = await client_backends(pg)
    # A billion rows: only a cursor read by demand can return the first ten at once.
    rows: list[Any] = await asyncio.wait_for(
        Flux.from_publisher(from_query(postgres.dsn, BILLION, fetch_size=4)).take(10).to_list(), 20
    )
    assert [r["n"] for r in rows] == list(range(1, 11))
    await settle_backends(pg, baseline)  # cancel closed the cursor and the connection


async def test_from_query_binds_arguments_and_maps_records(postgres: LocalPostgres) -> None:
    publisher = from_query(
        postgres.dsn,
        "SELECT g, g * $2 AS twice FROM generate_series(1, $1) g",
        2_500,
        2,
        fetch_size=300,
        record=tuple,
    )
    rows = await Flux.from_publisher(publisher).to_list()
    assert rows == [(g, 2 * g) for g in range(1, 2_501)]


async def test_from_query_is_read_in_the_reader_s_task_with_its_stages(
    postgres: LocalPostgres,
) -> None:
    publisher = from_query(
        postgres.dsn, "SELECT g FROM generate_series(1, 2500) g", fetch_size=300, record=tuple
    )
    flux = Flux.from_publisher(publisher)
    assert isinstance(publisher, LoopBound)  # Flux takes it as it is: no loop boundary
    seen = [row async for row in flux.filter(lambda row: row[0] % 2 == 0)]
    assert seen == [(g,) for g in range(2, 2501, 2)]
    total = await flux.map(lambda row: row[0] * 2).reduce(lambda acc, x: acc + x, 0)
    assert total == 2 * sum(range(1, 2501))
    ts = TestSubscriber[Any](initial_request=MAX_DEMAND)
    flux.map(lambda row: row[0]).filter(lambda g: g % 7 == 0).take(100).subscribe(ts)
    await ts.wait_terminated(timeout=20)
    ts.assert_values(*range(7, 701, 7)).assert_complete()


async def test_from_query_fails_on_a_record_that_is_none(postgres: LocalPostgres) -> None:
    publisher = from_query(
        postgres.dsn,
        "SELECT g FROM generate_series(1, 10) g",
        record=lambda row: None if row[0] == 5 else row[0],
    )
    with pytest.raises(
        NullSignalError, match=r"from_query's record returned None for Record <Record g=5>"
    ):
        await Flux.from_publisher(publisher).to_list()
    ts = TestSubscriber[Any](initial_request=MAX_DEMAND)
    publisher.subscribe(ts)
    await ts.wait_terminated(timeout=20)
    ts.assert_error(NullSignalError)


async def test_from_query_reports_a_failing_query(postgres: LocalPostgres) -> None:
    with pytest.raises(asyncpg.UndefinedTableError):
        await Flux.from_publisher(from_query(postgres.dsn, "SELECT * FROM no_such_table")).to_list()


async def test_from_query_gives_up_on_an_absent_server_with_a_clear_error() -> None:
    absent = LocalPostgres()  # never started: nothing listens on its port
    with pytest.raises(
        ConnectionLostError, match=r"postgresql://postgres@127\.0\.0\.1.*2 reconnect"
    ):
        await Flux.from_publisher(
            from_query(absent.dsn, "SELECT 1", backoff=Backoff(first=0.01, attempts=2))
        ).to_list()
    absent.stop()


async def counts(pg: asyncpg.Connection, table: str) -> tuple[int, int]:
    """Rows and distinct ids in *table*."""
    row = await pg.fetchrow(f"SELECT count(*), count(DISTINCT id) FROM {table}")
    assert row is not None
    return int(row[0]), int(row[1])


class Recorder:
    """A CommitListener that records what it was told."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, list[Any]]] = []

    def committed(self, batch_id: int, positions: Sequence[Any]) -> None:
        self.calls.append((batch_id, list(positions)))


async def make_table(pg: asyncpg.Connection, columns: str = "id bigint, name text") -> str:
    table = unique("t")
    await pg.execute(f"CREATE TABLE {table} ({columns})")
    return table


def recorded_sink(
    postgres: LocalPostgres, table: str, batch_size: int, max_latency: float = 1.0
) -> tuple[PostgresSink[tuple[int, str]], Recorder]:
    """A sink of ``(id, name)`` rows positioned by id, reporting to a `Recorder`."""
    recorder = Recorder()
    sink: PostgresSink[tuple[int, str]] = to_postgres(
        postgres.dsn,
        table,
        ["id", "name"],
        batch_size=batch_size,
        max_latency=max_latency,
        positions=lambda row: [row[0]],
        on_commit=recorder,
    )
    return sink, recorder


async def test_to_postgres_lands_batches_and_reports_them_in_order(
    postgres: LocalPostgres, pg: asyncpg.Connection
) -> None:
    table = await make_table(pg)
    sink, recorder = recorded_sink(postgres, table, batch_size=1_000)
    Flux.range(0, 2_500).map(lambda i: (i, f"n{i}")).subscribe(sink)
    assert await sink == 2_500
    assert [r["id"] for r in await pg.fetch(f"SELECT id FROM {table} ORDER BY id")] == list(
        range(2_500)
    )
    assert [batch for batch, _ in recorder.calls] == [1, 2, 3]
    assert [p for _, positions in recorder.calls for p in positions] == list(range(2_500))
    commits = await pg.fetch(
        f"SELECT batch_id, items, rows FROM {COMMITS_TABLE} WHERE sink = $1 ORDER BY batch_id",
        table,
    )
    assert [tuple(c) for c in commits] == [(1, 1_000, 1_000), (2, 1_000, 1_000), (3, 500, 500)]
    assert await committed_positions(postgres.dsn, table) == set(range(2_500))


async def test_to_postgres_skips_what_was_committed_and_reports_it_again(
    postgres: LocalPostgres, pg: asyncpg.Connection
) -> None:
    table = await make_table(pg)

    async def run(items: range) -> tuple[int, PostgresSink[dict[str, Any]], Recorder]:
        recorder = Recorder()
        sink: PostgresSink[dict[str, Any]] = to_postgres(
            postgres.dsn,
            table,
            ["id", "name"],
            batch_size=400,
            positions=lambda row: [row["id"]],
            on_commit=recorder,
        )
        Flux.from_iterable(items).map(lambda i: {"id": i, "name": str(i)}).subscribe(sink)
        written = await sink
        return written, sink, recorder

    written, _, _ = await run(range(1_000))
    assert written == 1_000
    # A rerun that overlaps (redelivery, a restart): only the new positions are written,
    # and the old ones are reported again so their source can acknowledge them.
    written, sink, recorder = await run(range(600, 1_500))
    assert written == 500
    assert sink.skipped == 400
    assert sorted(p for _, positions in recorder.calls for p in positions) == list(
        range(600, 1_500)
    )
    assert [batch for batch, _ in recorder.calls] == [4, 5, 6]
    assert await counts(pg, table) == (1_500, 1_500)


async def test_to_postgres_writes_a_position_twice_in_one_batch_once(
    postgres: LocalPostgres, pg: asyncpg.Connection
) -> None:
    table = await make_table(pg)
    sink, recorder = recorded_sink(postgres, table, batch_size=10)
    # 3 arrives again before its batch committed (redelivered after ack_wait)
    Flux.from_iterable([(1, "a"), (2, "b"), (3, "c"), (3, "c"), (4, "d")]).subscribe(sink)
    assert await sink == 4
    assert sink.skipped == 1
    assert await counts(pg, table) == (4, 4)
    assert recorder.calls == [(1, [1, 2, 3, 3, 4])]


async def test_to_postgres_numbers_the_batches_of_a_sink_named_with_quotes_and_backslashes(
    postgres: LocalPostgres, pg: asyncpg.Connection
) -> None:
    table = await make_table(pg)
    name = f"it's a \\ {table}"  # its commit row is written as a literal in the batch's COMMIT
    for run in range(2):
        sink: PostgresSink[tuple[int, str]] = to_postgres(
            postgres.dsn,
            table,
            ["id", "name"],
            batch_size=2,
            positions=lambda row: [row[0]],
            name=name,
        )
        Flux.from_iterable([(i, "n") for i in range(4 * run, 4 * run + 4)]).subscribe(sink)
        assert await sink == 4
    numbers = await pg.fetch(
        f"SELECT batch_id FROM {COMMITS_TABLE} WHERE sink = $1 ORDER BY batch_id", name
    )
    assert [n["batch_id"] for n in numbers] == [1, 2, 3, 4]
    assert await committed_positions(postgres.dsn, name) == set(range(8))


async def test_to_postgres_renumbers_a_batch_whose_number_another_writer_took(
    postgres: LocalPostgres, pg: asyncpg.Connection
) -> None:
    table = await make_table(pg)

    class RivalTakesBatch2:
        """Records, and takes number 2 once batch 1 committed: after the sink read the
        last number, before it takes 2."""

        def __init__(self) -> None:
            self.calls: list[tuple[int, list[Any]]] = []

        async def committed(self, batch_id: int, positions: Sequence[Any]) -> None:
            self.calls.append((batch_id, list(positions)))
            if batch_id == 1:
                await pg.execute(
                    f"INSERT INTO {COMMITS_TABLE} (sink, batch_id, items, rows) "
                    "VALUES ($1, 2, 0, 0)",
                    table,
                )

    recorder = RivalTakesBatch2()
    sink: PostgresSink[tuple[int, str]] = to_postgres(
        postgres.dsn,
        table,
        ["id", "name"],
        batch_size=100,
        positions=lambda row: [row[0]],
        on_commit=recorder,
    )
    Flux.from_iterable([(i, "n") for i in range(300)]).subscribe(sink)
    assert await sink == 300
    # batch 2's rows were rolled back with its number, then landed as batch 3
    assert await counts(pg, table) == (300, 300)
    assert [batch for batch, _ in recorder.calls] == [1, 3, 4]
    assert [p for _, positions in recorder.calls for p in positions] == list(range(300))
    commits = await pg.fetch(
        f"SELECT batch_id, items FROM {COMMITS_TABLE} WHERE sink = $1 ORDER BY batch_id", table
    )
    assert [tuple(c) for c in commits] == [(1, 100), (2, 0), (3, 100), (4, 100)]


async def test_to_postgres_lands_two_writers_of_one_sink_once_each(
    postgres: LocalPostgres, pg: asyncpg.Connection
) -> None:
    table = await make_table(pg)

    def writer(items: range) -> PostgresSink[tuple[int, str]]:
        sink: PostgresSink[tuple[int, str]] = to_postgres(
            postgres.dsn, table, ["id", "name"], batch_size=50, positions=lambda row: [row[0]]
        )
        Flux.from_iterable([(i, "n") for i in items]).subscribe(sink)
        return sink

    # Both read the same last number when they connect: every number one of them takes
    # first fails the other's commit, which reads the numbers again and retries.
    first, second = writer(range(500)), writer(range(500, 1_000))
    assert list(await asyncio.gather(first.wait(), second.wait())) == [500, 500]
    assert await counts(pg, table) == (1_000, 1_000)
    numbers = await pg.fetch(
        f"SELECT batch_id, items FROM {COMMITS_TABLE} WHERE sink = $1 ORDER BY batch_id", table
    )
    assert [n["batch_id"] for n in numbers] == list(range(1, len(numbers) + 1))
    assert sum(n["items"] for n in numbers) == 1_000
    assert first.batches + second.batches == len(numbers)


async def test_to_postgres_names_every_item_that_did_not_land(
    postgres: LocalPostgres, pg: asyncpg.Connection
) -> None:
    table = await make_table(pg, "id bigint NOT NULL")
    sink: PostgresSink[Any] = to_postgres(
        postgres.dsn, table, ["id"], batch_size=10, max_latency=30
    )
    cancelled: list[bool] = []
    items = [(i,) if i != 13 else (None,) for i in range(40)]
    Flux.from_iterable(items).do_on_cancel(lambda: cancelled.append(True)).subscribe(sink)
    with pytest.raises(PostgresWriteError, match="batch 2 was not written") as caught:
        await sink
    assert await pg.fetchval(f"SELECT count(*) FROM {table}") == 10
    assert caught.value.items[:10] == items[10:20]  # the rejected batch, then what was buffered
    assert 10 + len(caught.value.items) <= 40
    assert cancelled == [True]


def fed(items: list[Any], path: str) -> Flux[Any]:
    """*items* through *path*: "pulled" a request at a time (a source at hand), or "item by
    item" (a filter keeping everything: a chain that may drop items is never pulled)."""
    flux = Flux.from_iterable(items)
    return flux if path == "pulled" else flux.filter(lambda _: True)


class Pair(NamedTuple):
    id: int
    name: str


@pytest.mark.parametrize("path", ["pulled", "item by item"])
async def test_to_postgres_takes_each_item_as_a_row_or_a_mapping_by_column(
    postgres: LocalPostgres, pg: asyncpg.Connection, path: str
) -> None:
    pairs: list[Any] = [
        (0, "tuple"),
        [1, "list"],
        Pair(2, "Pair"),
        {"name": "dict", "id": 3},
        OrderedDict(name="OrderedDict", id=4),
        MappingProxyType({"id": 5, "name": "mappingproxy"}),
        UserDict(id=6, name="UserDict"),
    ]
    table = await make_table(pg)
    sink: PostgresSink[Any] = to_postgres(postgres.dsn, table, ["id", "name"], max_latency=30)
    fed(pairs, path).subscribe(sink)
    assert await sink == 7
    rows = await pg.fetch(f"SELECT id, name FROM {table} ORDER BY id")
    assert [r["name"] for r in rows] == [type(p).__name__ for p in pairs]
    # one column: a mapping's value still makes a row of one
    ids = await make_table(pg, "id bigint")
    sink = to_postgres(postgres.dsn, ids, ["id"], max_latency=30)
    fed([{"id": 7}, (8,), UserDict(id=9)], path).subscribe(sink)
    assert await sink == 3
    assert [r["id"] for r in await pg.fetch(f"SELECT id FROM {ids} ORDER BY id")] == [7, 8, 9]


def row(i: int) -> tuple[Any, ...]:
    return (i, f"n{i}")


def mapping(i: int) -> dict[str, Any]:
    return {"id": i, "name": f"n{i}"}


def id_of(item: Any) -> Any:
    return item["id"] if isinstance(item, dict) else item[0]


# case: (the table's columns, item i of a good stream, what stands in for item 6, the error the
# client raises on it: the conversion (KeyError, and ValueError for a row that does not fill the
# columns exactly, which asyncpg would send cut to the columns) or asyncpg's encoding (the others))
CLIENT_REJECTS: dict[str, tuple[str, Callable[[int], Any], Any, type[Exception]]] = {
    "wrong-typed value": ("id bigint, name text", row, ("six", "n6"), TypeError),
    "short row": ("id bigint, name text", row, (6,), ValueError),
    "long row": ("id bigint, name text", row, (6, "n6", "cut off"), ValueError),
    "mapping without a column": ("id bigint, name text", mapping, {"id": 6}, KeyError),
    "out of the column's range": ("id integer, name text", row, (2**40, "n6"), OverflowError),
}


@pytest.mark.parametrize("path", ["pulled", "item by item"])
@pytest.mark.parametrize("case", list(CLIENT_REJECTS))
async def test_to_postgres_names_the_item_the_client_rejects(
    postgres: LocalPostgres, pg: asyncpg.Connection, case: str, path: str
) -> None:
    columns, make, bad, error = CLIENT_REJECTS[case]
    table = await make_table(pg, columns)

    def sink() -> PostgresSink[Any]:
        return to_postgres(
            postgres.dsn,
            table,
            ["id", "name"],
            batch_size=4,
            max_latency=30,
            positions=lambda item: [id_of(item)],
        )

    good = [make(i) for i in range(12)]
    items = [*good[:6], bad, *good[7:]]
    first = sink()
    fed(items, path).subscribe(first)
    with pytest.raises(PostgresWriteError) as caught:
        await first
    assert str(caught.value).startswith(
        f"{table}: batch 2 was not written: its item 2 {bad!r} cannot be sent as rows "
        f"({error.__name__}: "
    )
    assert type(caught.value.__cause__) is error
    lost = caught.value.items
    assert lost[:4] == items[4:8]  # the batch, then what was buffered behind it
    assert lost == items[4 : 4 + len(lost)]
    assert [r["id"] for r in await pg.fetch(f"SELECT id FROM {table} ORDER BY id")] == [0, 1, 2, 3]
    # a rerun with the item mended lands the rest, and batch 1 not again
    second = sink()
    fed(good, path).subscribe(second)
    assert await second == 8
    assert await counts(pg, table) == (12, 12)


async def test_to_postgres_names_the_item_whose_rows_cannot_be_encoded_not_the_row(
    postgres: LocalPostgres, pg: asyncpg.Connection
) -> None:
    table = await make_table(pg)

    def rows(i: int) -> list[tuple[Any, ...]]:
        return [(i, "first"), (i, 2 if i == 7 else "second")]  # item 7's second name is no text

    def sink() -> PostgresSink[int]:
        return to_postgres(
            postgres.dsn,
            table,
            ["id", "name"],
            rows=rows,
            batch_size=10,
            max_latency=30,
            positions=lambda i: [i],
        )

    landed = sink()
    Flux.range(0, 5).subscribe(landed)
    assert await landed == 10
    # items 0 to 4 are skipped: the item named is counted in the batch, not among those sent
    rerun = sink()
    Flux.range(0, 10).subscribe(rerun)
    with pytest.raises(PostgresWriteError) as caught:
        await rerun
    assert str(caught.value).startswith(
        f"{table}: batch 2 was not written: its item 7 7 cannot be sent as rows (TypeError: "
    )
    assert type(caught.value.__cause__) is TypeError
    assert caught.value.items == list(range(10))
    assert await counts(pg, table) == (10, 5)


async def test_to_postgres_sizes_its_batches_by_rows_and_bytes(
    postgres: LocalPostgres, pg: asyncpg.Connection
) -> None:
    table = await make_table(pg)
    wide = "x" * 100  # a row (i, wide): 12 + 104 bytes
    sink: PostgresSink[Any] = to_postgres(
        postgres.dsn, table, ["id", "name"], batch_bytes=116 * 300, max_latency=30
    )
    Flux.range(0, 2_000).map(lambda i: (i, wide)).subscribe(sink)
    assert await sink == 2_000
    # the first 1,000 items are measured; their rows' size bounds every batch, the first too
    sizes = await pg.fetch(
        f"SELECT items FROM {COMMITS_TABLE} WHERE sink = $1 ORDER BY batch_id", table
    )
    assert [s["items"] for s in sizes] == [300] * 6 + [200]
    # narrow rows: the items bound a batch, and the default bound is a bulk load's
    narrow = await make_table(pg)
    sink = to_postgres(postgres.dsn, narrow, ["id", "name"], max_latency=30)
    assert 40_000 <= sink.batch_size < 3 * 60_000
    Flux.range(0, 60_000).map(lambda i: (i, "n")).subscribe(sink)
    assert await sink == 60_000
    sizes = await pg.fetch(
        f"SELECT items FROM {COMMITS_TABLE} WHERE sink = $1 ORDER BY batch_id", narrow
    )
    assert growing([s["items"] for s in sizes], sink.batch_size, 60_000)
    for path in ("pulled", "item by item"):
        ramp = await make_table(pg)
        sink = to_postgres(postgres.dsn, ramp, ["id", "name"], batch_size=8_000, max_latency=30)
        fed([(i, "n") for i in range(30_000)], path).subscribe(sink)
        assert await sink == 30_000
        sizes = await pg.fetch(
            f"SELECT items FROM {COMMITS_TABLE} WHERE sink = $1 ORDER BY batch_id", ramp
        )
        assert growing([s["items"] for s in sizes], 8_000, 30_000), path


def growing(sizes: list[int], batch_size: int, total: int) -> bool:
    """*sizes* are the batches of a load of *total* items: the first what gathered while the
    sink connected, at least a third of *batch_size*; each later one but the last as large as
    the growth allows, *batch_size* or three times the one before."""
    return (
        sum(sizes) == total
        and min(total, batch_size // 3) <= sizes[0] <= batch_size
        and all(
            later == min(batch_size, 3 * before) for before, later in itertools.pairwise(sizes[:-1])
        )
        and (len(sizes) == 1 or sizes[-1] <= min(batch_size, 3 * sizes[-2]))
    )


async def test_to_postgres_lands_a_slow_stream_within_max_latency(
    postgres: LocalPostgres, pg: asyncpg.Connection
) -> None:
    table = await make_table(pg, "id bigint")
    sink: PostgresSink[Any] = to_postgres(postgres.dsn, table, ["id"], max_latency=0.05)
    # three items, then a stream that stays open: a batch of the default size never fills
    Flux.range(0, 3).map(lambda i: (i,)).concat_with(Flux.never()).subscribe(sink)
    for _ in range(200):
        if await pg.fetchval(f"SELECT count(*) FROM {table}") == 3:
            break
        await asyncio.sleep(0.05)
    assert await pg.fetchval(f"SELECT count(*) FROM {table}") == 3
    await sink.aclose()


async def test_to_postgres_lands_what_it_buffered_before_an_upstream_error(
    postgres: LocalPostgres, pg: asyncpg.Connection
) -> None:
    table = await make_table(pg, "id bigint")
    sink: PostgresSink[Any] = to_postgres(
        postgres.dsn, table, ["id"], batch_size=100, max_latency=30
    )
    Flux.range(0, 30).map(lambda i: (i,)).concat_with(
        Flux.error(RuntimeError("upstream"))
    ).subscribe(sink)
    with pytest.raises(RuntimeError, match="upstream"):
        await sink
    assert await pg.fetchval(f"SELECT count(*) FROM {table}") == 30


def numbered(path: str, count: int, fail_at: int | None) -> Flux[tuple[int, str]]:
    """Rows ``(i, "n<i>")`` for i up to *count*, the stream failing at *fail_at*, through
    *path*: "pulled" (a source at hand), "item by item" (a chain with a filter, never pulled)
    or "awaited" (an async generator, emitted from a task)."""

    def row(i: int) -> tuple[int, str]:
        if i == fail_at:
            raise RuntimeError(f"upstream failed at {i}")
        return (i, f"n{i}")

    if path == "awaited":

        async def rows() -> AsyncIterator[tuple[int, str]]:
            for i in range(count):
                yield row(i)

        return Flux.from_async_iterable(rows())
    flux = Flux.range(0, count).map(row)
    return flux if path == "pulled" else flux.filter(lambda _: True)


UPSTREAMS = {
    "pulled": "range → map (pulled)",
    "item by item": "range → map → filter (fused)",
    "awaited": "AwaitingSubscription",
}
"""What `snapshot` shows above the sink for each path of `numbered`."""


@pytest.mark.parametrize("fail_at", [None, 2_345], ids=["complete", "failing mid-stream"])
async def test_to_postgres_lands_the_same_whether_pulled_or_item_by_item(
    postgres: LocalPostgres, pg: asyncpg.Connection, fail_at: int | None
) -> None:
    count = 5_000
    landed: dict[str, tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], Any]] = {}
    for path, upstream in UPSTREAMS.items():
        table = await make_table(pg)
        sink, recorder = recorded_sink(postgres, table, batch_size=1_000, max_latency=30)
        numbered(path, count, fail_at).subscribe(sink)
        assert [stage.operator for stage in snapshot(sink).stages] == ["to_postgres", upstream]
        if fail_at is None:
            assert await sink == count
        else:  # what arrived before the error lands, then the sink fails with it
            with pytest.raises(RuntimeError, match=f"upstream failed at {fail_at}"):
                await sink
        rows = await pg.fetch(f"SELECT id, name FROM {table} ORDER BY id")
        commits = await pg.fetch(
            f"SELECT batch_id, items, rows FROM {COMMITS_TABLE} WHERE sink = $1 ORDER BY batch_id",
            table,
        )
        landed[path] = ([tuple(r) for r in rows], [tuple(c) for c in commits], recorder.calls)
    end = count if fail_at is None else fail_at
    written, batches, calls = landed["pulled"]
    assert written == [(i, f"n{i}") for i in range(end)]
    assert [p for _, positions in calls for p in positions] == list(range(end))
    assert [number for number, _, _ in batches] == list(range(1, len(batches) + 1))
    assert all(items == rows <= 1_000 for _, items, rows in batches)
    for path in ("item by item", "awaited"):
        # the same rows and positions; the batches may be cut elsewhere (the first batch is
        # what gathered while the sink connected)
        assert landed[path][0] == written
        assert [p for _, positions in landed[path][2] for p in positions] == list(range(end))
        assert sum(items for _, items, _ in landed[path][1]) == end


@pytest.mark.driver_drops_failed_future(
    asyncpg.ConnectionDoesNotExistError,
    "asyncpg 0.32's copy_in makes its waiter before checking that the connection is free; "
    "when the server has just ended the session, that check raises (the sink retries the "
    "batch) and the waiter, failed later by the lost connection, is dropped unretrieved",
)
async def test_to_postgres_reconnects_and_loses_nothing(
    postgres: LocalPostgres, pg: asyncpg.Connection
) -> None:
    table = await make_table(pg, "id bigint")
    sink: PostgresSink[Any] = to_postgres(
        postgres.dsn,
        table,
        ["id"],
        batch_size=50,
        positions=lambda row: [row[0]],
        backoff=Backoff(first=0.05, attempts=20),
    )
    killed = asyncio.get_running_loop().create_future()

    async def kill_sink_connection(i: int) -> tuple[int]:
        if i == 120 and not killed.done():
            await pg.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()"
            )
            killed.set_result(None)
        return (i,)

    Flux.range(0, 300).map_async(kill_sink_connection).subscribe(sink)
    assert await sink == 300
    assert killed.done()
    assert await counts(pg, table) == (300, 300)


async def test_listen_delivers_notifications_and_dead_letters_bad_payloads(
    postgres: LocalPostgres, pg: asyncpg.Connection
) -> None:
    baseline = await client_backends(pg)
    channel = unique("ch")
    dead = await make_table(pg, "channel text, payload text, reason text")
    assert DEAD_LETTER_COLUMNS == ("channel", "payload", "reason")
    received: list[Any] = []
    ready = asyncio.Event()
    disposable = listen(postgres.dsn, channel, parse=json.loads, dead_letter=dead).subscribe(
        on_next=received.append
    )
    for _ in range(200):  # the listener's LISTEN is in place once a notification gets through
        await pg.execute("SELECT pg_notify($1, $2)", channel, '{"probe": true}')
        await asyncio.sleep(0.02)
        if received:
            ready.set()
            break
    assert ready.is_set()
    received.clear()
    for payload in ['{"i": 1}', "oops", '{"i": 2}']:
        await pg.execute("SELECT pg_notify($1, $2)", channel, payload)
    for _ in range(200):
        if len(received) == 2 and await pg.fetchval(f"SELECT count(*) FROM {dead}") == 1:
            break
        await asyncio.sleep(0.02)
    assert received == [{"i": 1}, {"i": 2}]
    row = await pg.fetchrow(f"SELECT channel, payload, reason FROM {dead}")
    assert row is not None
    assert row["channel"] == channel
    assert row["payload"] == "oops"
    assert "JSONDecodeError" in row["reason"]
    disposable.dispose()
    await settle_backends(pg, baseline)  # cancel closed the listening connection


async def test_listen_applies_its_overflow_policy(
    postgres: LocalPostgres, pg: asyncpg.Connection
) -> None:
    baseline = await client_backends(pg)
    channel = unique("ch")
    iterator: Any = listen(
        postgres.dsn, channel, overflow=Overflow.BUFFER(3, then="drop_oldest")
    ).iterate(prefetch=1)
    first = asyncio.ensure_future(anext(iterator))
    while not first.done():
        await pg.execute("SELECT pg_notify($1, 'probe')", channel)
        await asyncio.sleep(0.02)
    assert first.result() == "probe"
    await asyncio.sleep(0.1)  # probes still in flight land before the burst
    for i in range(10):
        await pg.execute("SELECT pg_notify($1, $2)", channel, str(i))
    await asyncio.sleep(0.3)
    rest = [await anext(iterator) for _ in range(4)]
    # one item prefetched by the iterator, then the newest three the buffer kept
    assert rest[-3:] == ["7", "8", "9"]
    await iterator.aclose()
    await settle_backends(pg, baseline)


async def test_listen_listens_again_after_its_connection_was_killed(
    postgres: LocalPostgres, pg: asyncpg.Connection
) -> None:
    channel = unique("ch")
    received: list[str] = []
    disposable = listen(postgres.dsn, channel, backoff=Backoff(first=0.05, attempts=20)).subscribe(
        on_next=received.append
    )

    async def deliver(payload: str) -> None:
        for _ in range(300):
            await pg.execute("SELECT pg_notify($1, $2)", channel, payload)
            await asyncio.sleep(0.02)
            if payload in received:
                return
        raise AssertionError(f"{payload!r} never arrived")

    await deliver("before")
    await pg.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        "WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()"
    )
    await deliver("after")  # reconnected and LISTENing again
    disposable.dispose()
