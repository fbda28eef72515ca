"""The results after the stream, computed by Spark from what ``events/`` holds committed:
``rejected/``, ``carrier_hourly/``, the per-carrier summary and ``delays.png``.

Spark reads the events once, in one query that counts and sums them per carrier and hour
(`carrier_hours`); every result is a roll-up of that small table, done and written with
pyarrow, so a run pays for one cold Spark query instead of one per result and Spark's writer
is not woken for two files of a few thousand rows. The chart is drawn while they are written.

They are written aside (`Staging`) and swapped in only once all of them are done and the counts
are checked, by a run at its end or by ``reactive-aio aggregate`` once the workers have ended.
For an output landed from a stream, the counts are the stream's own: every record on its
records subject is in ``events/`` once or in the dead letter, never both.
"""

from __future__ import annotations

__all__ = (
    "CARRIER_HOURS_SQL",
    "Phases",
    "PipelineResult",
    "Results",
    "count_reasons",
    "stream_check",
    "write_results",
)

import asyncio
import decimal
import math
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal, final

import attrs

from reactive_aio import PositionSet
from reactive_aio.spark import committed_positions, read_committed, to_thread

from ._broker import StreamTally
from ._chart import hourly_delays, load_matplotlib, write_chart
from ._flights import airline_names, airlines
from ._outputs import Staging
from ._progress import Progress

CARRIER_HOURS_SQL = """
SELECT carrier,
       time_hour,
       count(*)                                           AS flights,
       sum(CASE WHEN dep_time IS NULL THEN 1 ELSE 0 END)  AS cancelled,
       count(dep_delay) AS dep_n, sum(dep_delay) AS dep_sum,
       count(arr_delay) AS arr_n, sum(arr_delay) AS arr_sum
FROM events
GROUP BY carrier, time_hour
"""
"""The one Spark query over the events: every result is a roll-up of its rows, one per carrier
and hour.

Its keys and its aggregation buffer are numbers and one short string, which Spark aggregates
in a hash map. An event's ``airline`` is its carrier's name (`._flights.enrich`): it is looked
up per row of the result (`carrier_hours`) rather than carried through the query, where a
second string key cost the cold first query 0.1 s on a quiet machine and up to half a second
on a loaded one (``first(airline)`` would put a string in the buffer, which only Spark's
sort-based aggregate takes)."""


@final
@attrs.frozen
class PipelineResult:
    """What a pipeline run (or a worker, or an aggregate) read, landed and rejected, and
    where it put it."""

    read: int
    """Input records (lines that were records, malformed or not); a worker's: the messages it
    took; an aggregate's: the records of the stream."""
    landed: int
    """Rows ``events/`` holds; a worker's: the rows it landed itself."""
    rejected: int
    """Distinct rejected records (``rejected/``); a worker's: the ones it dead-lettered."""
    seconds: float
    out: Path
    chart: Path | None
    summary: list[dict[str, Any]]
    """Per carrier: flights, cancelled, mean delays (from Spark SQL)."""
    reasons: dict[str, int]
    """Dead-letter counts by the field named in the reason."""
    phases: dict[str, float]
    """Wall seconds of each phase: start (Spark + input), stream, aggregate, chart."""
    writes: int
    """Batches the sink wrote to ``events/``."""
    skipped: int = 0
    """Records a resumed run found landed already and did not replay (from a stream: the
    redelivered messages it found committed, by an earlier run or another worker, and
    acknowledged)."""
    resumed: bool = False
    dead_letter: str | None = None
    """The subject rejected records were sent to (a ``source`` run)."""
    role: Literal["run", "worker", "aggregate"] = "run"
    """``run``: `run_pipeline`; ``worker``: `run_pipeline` with ``worker=True`` (no results
    computed); ``aggregate``: `aggregate_output` (results only)."""


@attrs.define(eq=False)
class Phases:
    """Wall seconds of each phase of a run, in order, each from the end of the one before."""

    started: float = attrs.field(factory=time.perf_counter)
    seconds: dict[str, float] = attrs.field(factory=dict)

    def lap(self, name: str) -> None:
        """*name* ends now."""
        self.seconds[name] = self.elapsed() - sum(self.seconds.values())

    def elapsed(self) -> float:
        return time.perf_counter() - self.started


@final
@attrs.frozen
class Results:
    """What `write_results` put in place."""

    landed: int
    """Rows ``events/`` holds committed."""
    rejected: int
    summary: list[dict[str, Any]]
    """Per carrier: flights, cancelled, mean delays (from Spark SQL)."""
    reasons: dict[str, int]
    """Rejected records by the field named in the reason, most first."""
    chart: Path | None


async def write_results(
    spark: Any,
    out: Path,
    rejected: Any,
    *,
    chart: bool,
    display: Progress,
    phases: Phases,
    check: Callable[[int], None],
) -> Results:
    """Compute the results from ``out/events`` and the *rejected* records (a table in
    ``REJECT_SCHEMA``), call *check* with the rows landed (it raises if a count is off), then
    replace the previous results; nothing is replaced if anything fails."""
    staging = await to_thread(Staging.create, out)
    # Imported while Spark computes; an import error shows again when the chart is drawn.
    loading = asyncio.gather(to_thread(load_matplotlib), return_exceptions=True) if chart else None
    try:
        display.enter(f"aggregating {out / 'events'} with Spark SQL")
        hours = await to_thread(carrier_hours, spark, out / "events")
        landed = sum(hours.column("flights").to_pylist())
        check(landed)
        summary = carrier_summary(hours)
        if loading is not None:
            await loading
        drawing = (
            asyncio.ensure_future(
                _settled(
                    to_thread(
                        write_chart, staging.path("delays.png"), hourly_delays(hours), summary
                    )
                )
            )
            if chart
            else None
        )
        try:
            await _settled(
                to_thread(_write_table, staging.path("rejected"), rejected),
                to_thread(_write_table, staging.path("carrier_hourly"), _hourly(hours)),
            )
            phases.lap("aggregate")
        finally:
            if drawing is not None:
                display.enter("drawing the chart")
                await drawing
        if drawing is not None:
            phases.lap("chart")
        display.enter(f"replacing the results in {out}")
        # A few renames, on the loop: no cancel (an abort) can land between two of them.
        published = staging.publish()
    finally:
        staging.discard()
    return Results(
        landed,
        rejected.num_rows,
        summary,
        count_reasons(rejected),
        out / "delays.png" if "delays.png" in published else None,
    )


async def _settled(*calls: Awaitable[Any]) -> None:
    """Await every one of *calls* (threads writing into the staging folder), then raise the
    first error, if any: none is still writing when the caller discards the folder."""
    for outcome in await asyncio.gather(*calls, return_exceptions=True):
        if isinstance(outcome, BaseException):
            raise outcome


def count_reasons(rejected: Any) -> dict[str, int]:
    """Rejected records (a table in ``REJECT_SCHEMA``) by the field their reason names (the
    text before its first colon), most first."""
    reasons: dict[str, int] = {}
    for reason in rejected.column("reason").to_pylist():
        field = reason.split(":", 1)[0]
        reasons[field] = reasons.get(field, 0) + 1
    return dict(sorted(reasons.items(), key=lambda kv: -kv[1]))


async def stream_check(
    events: Path, rejected: Any, tally: StreamTally, stream: str
) -> Callable[[int], None]:
    """A *check* for `write_results` of an output landed from *stream*: it raises
    `RuntimeError` unless every record of the stream is in *events* once (the rows landed,
    one per committed position) or among the *rejected*, and not in both."""
    committed = await committed_positions(events)
    return lambda landed: _check_stream_counts(landed, committed, rejected, tally, stream)


def _check_stream_counts(
    landed: int, committed: PositionSet, rejected: Any, tally: StreamTally, stream: str
) -> None:
    rejected_positions = PositionSet(rejected.column("source_line").to_pylist())
    if landed != len(committed):
        raise RuntimeError(
            f"events/ holds {landed:,} rows for {len(committed):,} stream positions: "
            "some record landed more than once"
        )
    both = committed.intersection(rejected_positions)
    if both:
        raise RuntimeError(f"records both landed and rejected: {both.describe()}")
    if landed + len(rejected_positions) != tally.records:
        raise RuntimeError(
            f"records lost: {stream} holds {tally.records:,} records; {landed:,} landed "
            f"and {len(rejected_positions):,} rejected"
        )


def _write_table(path: Path, table: Any) -> None:
    """*table* as a folder of one Parquet file, as Spark writes a table of one partition
    (and reads it back, the empty table included)."""
    import pyarrow.parquet as pq

    path.mkdir()
    pq.write_table(table, path / "part-00000.parquet")


def carrier_hours(spark: Any, events: Path) -> Any:
    """Per carrier and scheduled hour of what *events* holds committed, as a ``pyarrow.Table``:
    ``airline``, ``flights``, ``cancelled``, and the count and sum of each delay."""
    read_committed(spark, events).createOrReplaceTempView("events")
    hours = spark.sql(CARRIER_HOURS_SQL).toArrow()
    return hours.add_column(2, "airline", airlines(hours.column("carrier"), airline_names()))


def _hourly(hours: Any) -> Any:
    """``carrier_hourly`` from `carrier_hours`: the means, in the order of the hour, then the
    carrier."""
    import pyarrow as pa
    import pyarrow.compute as pc

    def mean(delay: str) -> Any:
        # A sum over no delay is null, and so is the mean (as Spark's avg gives it).
        return pc.divide(hours[f"{delay}_sum"], pc.cast(hours[f"{delay}_n"], pa.float64()))

    # The key and count columns keep the types and nullability Spark gave them.
    return (
        hours.select(["carrier", "time_hour", "flights", "cancelled"])
        .append_column("dep_delay_mean", mean("dep"))
        .append_column("arr_delay_mean", mean("arr"))
        .sort_by([("time_hour", "ascending"), ("carrier", "ascending")])
    )


def carrier_summary(hours: Any) -> list[dict[str, Any]]:
    """Per carrier, most flights first: ``airline``, ``flights``, ``cancelled`` and the mean
    delays rounded to 2 decimals, from `carrier_hours`."""
    totals = hours.group_by("carrier", use_threads=False).aggregate(
        [
            ("airline", "first"),
            *((name, "sum") for name in ("flights", "cancelled", "dep_n", "dep_sum")),
            *((name, "sum") for name in ("arr_n", "arr_sum")),
        ]
    )
    rows = [
        {
            "carrier": row["carrier"],
            "airline": row["airline_first"],
            "flights": row["flights_sum"],
            "cancelled": row["cancelled_sum"],
            "dep_delay_mean": _mean(row["dep_sum_sum"], row["dep_n_sum"]),
            "arr_delay_mean": _mean(row["arr_sum_sum"], row["arr_n_sum"]),
        }
        for row in totals.to_pylist()
    ]
    return sorted(rows, key=lambda row: (-row["flights"], row["carrier"] or ""))


def _mean(total: float | None, count: int) -> float | None:
    """*total* / *count* rounded to 2 decimals as Spark's ``round`` does: half up, on the
    shortest decimal that reads back as the double (what ``repr`` prints)."""
    if total is None or count == 0:
        return None
    value = total / count
    if not math.isfinite(value):
        return value
    rounded = decimal.Decimal(repr(value)).quantize(decimal.Decimal("0.01"), decimal.ROUND_HALF_UP)
    return float(rounded)
