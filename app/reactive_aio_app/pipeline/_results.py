"""The results after the stream, computed by Spark from what ``events/`` holds committed:
``rejected/``, ``carrier_hourly/``, the per-carrier summary and ``delays.png``.

They are written aside (`Staging`) and swapped in only once all of them are done and the counts
are checked, by a run at its end or by ``reactive-aio aggregate`` once the workers have ended.
For an output landed from a stream, the counts are the stream's own: every record on its
records subject is in ``events/`` once or in the dead letter, never both.
"""

from __future__ import annotations

__all__ = ("Phases", "PipelineResult", "Results", "count_reasons", "stream_check", "write_results")

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, final

import attrs

from reactive_aio import PositionSet
from reactive_aio.spark import committed_positions, read_committed, to_thread

from ._broker import StreamTally
from ._chart import write_chart
from ._outputs import Staging
from ._progress import Progress

_HOURLY_SQL = """
SELECT carrier,
       time_hour,
       count(*)                                           AS flights,
       sum(CASE WHEN dep_time IS NULL THEN 1 ELSE 0 END)  AS cancelled,
       avg(dep_delay)                                     AS dep_delay_mean,
       avg(arr_delay)                                     AS arr_delay_mean
FROM events
GROUP BY carrier, time_hour
"""

_SUMMARY_SQL = """
SELECT carrier,
       first(airline)                                     AS airline,
       count(*)                                           AS flights,
       sum(CASE WHEN dep_time IS NULL THEN 1 ELSE 0 END)  AS cancelled,
       round(avg(dep_delay), 2)                           AS dep_delay_mean,
       round(avg(arr_delay), 2)                           AS arr_delay_mean
FROM events
GROUP BY carrier
ORDER BY flights DESC
"""


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
    try:
        display.enter(f"aggregating {out / 'events'} with Spark SQL")
        await to_thread(_write_rejected, spark, staging.path("rejected"), rejected)
        landed, summary = await to_thread(_aggregate, spark, out, staging)
        check(landed)
        phases.lap("aggregate")
        if chart:
            display.enter("drawing the chart")
            await to_thread(write_chart, spark, staging.path("delays.png"), summary)
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


def _write_rejected(spark: Any, path: Path, rejected: Any) -> None:
    # Spark Connect infers no schema from an empty table: give it.
    schema = "source_line long, reason string, raw string"
    frame = spark.createDataFrame(rejected, schema=schema)
    frame.coalesce(1).write.mode("overwrite").parquet(str(path))


def _aggregate(spark: Any, out: Path, staging: Staging) -> tuple[int, list[dict[str, Any]]]:
    """Spark SQL over what landed: ``carrier_hourly/`` (staged) and the per-carrier summary."""
    events = read_committed(spark, out / "events")
    events.createOrReplaceTempView("events")
    hourly = spark.sql(_HOURLY_SQL)
    hourly.orderBy("time_hour", "carrier").coalesce(1).write.mode("overwrite").parquet(
        str(staging.path("carrier_hourly"))
    )
    landed = int(events.count())
    summary = spark.sql(_SUMMARY_SQL).toArrow().to_pylist()
    return landed, summary
