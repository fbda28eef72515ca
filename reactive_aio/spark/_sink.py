"""``to_spark``: a subscriber that lands a stream in a directory or a table, exactly once, in batches.

Every batch lands under the protocol of ``_landing``: its files are staged where Spark and
pyarrow never look, a commit record (the batch's number, files, rows and source positions) is
the commit point, and renames make the files visible. A batch of one file appears whole; a
partitioned batch appears file by file, and a crash between its renames leaves part of it
visible to a plain directory reader until the next writer opens the target, while
`read_committed` never shows part of a batch. Opened over a target, the sink reads its log
first, and before each commit it reads what other writers (other sinks, other processes)
committed meanwhile: items whose source positions are committed already are not landed again
but reported to ``on_commit`` (a redelivered broker message still gets acknowledged), and
`SparkSink.committed_positions` tells a replayable source where to resume.

Backpressure: bounded; the sink requests about one batch of items, and while a batch is being
written it gathers the next and hands it over as soon as it is full: its files are encoded,
written and synced while the batch before it commits. So it holds at most two batches: two
being written, or one being written and one being gathered. A batch is written at
*batch_rows* rows or *max_latency* seconds after its first item.
Errors: a failed write cancels upstream and fails `SparkSink.wait` with `SparkWriteError`,
whose ``not_landed`` names every record that did not land: the failed batch, the one handed
over after it (it does not commit) and what was gathered meanwhile (written + skipped + not
landed = received). A batch whose schema drifts from the target's fails the same way,
naming the column, after what came before it landed. An upstream error first lands what is
buffered, then fails `wait`.
Loop: needs a running event loop at subscribe time; file and Spark work runs on one worker
thread per job (reading the log, writing a batch), and the loop never waits on it; batches
commit, and are reported, in the order they were handed over.
"""

from __future__ import annotations

__all__ = ("SinkStatistics", "SparkSink", "SparkWriteError", "to_spark")

import asyncio
import math
import os
import threading
import uuid
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, final

import attrs

from .._commit import CommitListener, PositionSet
from .._core import DemandWindow, report_error, require_not_none
from ..connectors._task_sink import LandingSink
from ._committed import committed_positions
from ._dedupe import CommittedIndex, PartlyCommitted, Positions
from ._lander import Landed, Lander
from ._landing import Recovered
from ._tables import Batch, rows_in, schema_difference
from ._threads import start_thread, to_thread

WriteMode = Literal["append", "overwrite", "error"]
_Turn = tuple[threading.Event | None, threading.Event | None]
"""A job's turn: the event set when the job before it has reported, and its own."""
Engine = Literal["auto", "arrow", "spark"]


@final
@attrs.frozen
class SinkStatistics:
    """A snapshot of a `SparkSink`."""

    rows_received: int
    rows_written: int
    """Rows this sink committed."""
    rows_skipped: int
    """Rows received whose positions the target had committed already: not landed again."""
    writes: int
    buffered_rows: int
    """Rows gathered for the next batch (a batch being written is not counted here)."""
    outstanding_demand: int
    """Items requested from upstream and not received yet."""
    writing: bool


class SparkWriteError(RuntimeError):
    """Records did not land; the message names them and ``not_landed`` holds their positions.

    Positions are in the source's terms when the sink has ``positions=``; otherwise they are
    the records' offsets in the stream the sink received (0 for its first row).
    """

    def __init__(self, message: str, *, not_landed: PositionSet, rows: int) -> None:
        super().__init__(message)
        self.not_landed = not_landed
        """Positions of every record that did not land."""
        self.rows_not_landed = rows


@final
@attrs.define(eq=False)
class SparkSink(LandingSink[Any]):
    """Lands what it receives in its target exactly once; see `to_spark`.

    Await `wait` (or the sink itself) for the number of rows it committed.
    """

    _lander: Lander = attrs.field(alias="lander")
    """Where and how batches land; its writer, once the sink is one."""
    batch_rows: int
    max_latency: float
    mode: WriteMode
    schema: Any
    on_commit: CommitListener[Any] | None
    _detaching: bool = attrs.field(default=False, init=False)
    _demand: DemandWindow = attrs.field(factory=DemandWindow, init=False)
    """Upstream and what it was asked for and has not delivered yet."""
    _ready: bool = attrs.field(default=False, init=False)
    """The commit log has been read; items may be requested."""
    _gathering: Batch = attrs.field(factory=Batch, init=False)
    _writing: deque[Batch] = attrs.field(factory=deque, init=False)
    """Batches handed to workers, oldest first: the next one is encoded while one commits."""
    _turn: threading.Event | None = attrs.field(default=None, init=False)
    """Set once the newest batch's outcome is on its way to the loop: the next one commits
    after it, so batches commit and report in the order they were handed over."""
    _stages: int = attrs.field(default=0, init=False)
    """Batches this sink has staged (a retry of a conflicting one gets a new number)."""
    _committed: CommittedIndex = attrs.field(factory=CommittedIndex, init=False)
    """What the target holds committed, from any writer, as far as this sink has seen."""
    _schema: Any = attrs.field(default=None, init=False)
    """The target's schema (an item's columns besides a positions column), once known."""
    _rows_per_item: float = attrs.field(default=0.0, init=False)
    _items_seen: int = attrs.field(default=0, init=False)
    _timer: asyncio.TimerHandle | None = attrs.field(default=None, init=False)
    _due: bool = attrs.field(default=False, init=False)
    _cancelled: bool = attrs.field(default=False, init=False)
    """The sink cancelled upstream: items still arriving are counted as not landed."""
    _error: BaseException | None = attrs.field(default=None, init=False)
    _write_failure: tuple[str, BaseException | None, str | None] | None = attrs.field(
        default=None, init=False
    )
    """Why records did not land; the error naming them is built when the sink settles."""
    _lost: list[PositionSet] = attrs.field(factory=list, init=False)
    _lost_rows: int = attrs.field(default=0, init=False)
    _reports: deque[tuple[int, PositionSet]] = attrs.field(factory=deque, init=False)
    _reporting: bool = attrs.field(default=False, init=False)
    rows_received: int = attrs.field(default=0, init=False)
    rows_written: int = attrs.field(default=0, init=False)
    rows_skipped: int = attrs.field(default=0, init=False)
    writes: int = attrs.field(default=0, init=False)

    @property
    def target(self) -> str:
        """The path, or the table's name."""
        return self._lander.target

    @property
    def run(self) -> str:
        """This sink's id in the commit records and file names it writes."""
        return self._lander.run

    @property
    def positions(self) -> Positions | None:
        return self._lander.positions

    # -- awaiting -----------------------------------------------------------------------

    async def wait(self) -> int:
        """Wait until the stream ended and everything was committed; return the rows written.

        Raises:
            SparkWriteError: records did not land (a write failed, a batch's schema drifted,
                the target was refused); upstream was cancelled.
            Exception: the upstream error, after what was buffered was committed.
        """
        return await super().wait()

    async def committed_positions(self) -> PositionSet:
        """Every source position the target holds committed, from any run of any sink.

        A replayable source resumes by replaying what is not in this set. Before the sink is
        subscribed this reads the target's commit log as it is now (``mode="overwrite"``
        empties it only at subscribe time); afterwards it includes this sink's commits and
        those of other writers it has seen. It only reads: a writer landing meanwhile is
        never disturbed.
        """
        if self._ready:
            return self._committed.positions
        return await committed_positions(await to_thread(self._lander.open_log))

    def statistics(self) -> SinkStatistics:
        """A snapshot for progress displays."""
        return SinkStatistics(
            self.rows_received,
            self.rows_written,
            self.rows_skipped,
            self.writes,
            self._gathering.rows,
            self._demand.asked,
            bool(self._writing),
        )

    def cancel(self) -> None:
        """Stop: cancel upstream and drop what is gathered; a write in flight still commits.

        `wait` then raises `asyncio.CancelledError` once that write has ended;
        ``rows_written`` says what landed.
        """
        self._stop_upstream()
        self._fail(asyncio.CancelledError())

    # -- Subscriber ---------------------------------------------------------------------

    def _begin(self) -> None:
        self._demand.upstream = self._upstream
        # Nothing is requested before the log is read: the first item may be committed already.
        self._start(self._lander.attach, self._attached, self.mode)

    def on_next(self, item: Any) -> None:
        if item is None:
            require_not_none(item, "2.13", "on_next's item")
        if self._upstream_done or self._error is not None:
            if self._cancelled:  # in flight when upstream was cancelled: it does not land
                rows = rows_in(item)
                offset = self.rows_received
                self.rows_received += rows
                positions = self._positions_of(item, rows, offset)
                if positions is not None:
                    self._lose_item(rows, positions)
            return
        rows = rows_in(item)
        self._demand.received()
        offset = self.rows_received
        self.rows_received += rows
        # A running mean of rows per item sizes the requests to about one batch.
        self._items_seen += 1
        self._rows_per_item += (rows - self._rows_per_item) / min(self._items_seen, 64)
        positions = self._positions_of(item, rows, offset)
        if positions is None:
            return
        if self._committed.positions:
            kept = self._skip_committed(item, rows, positions)
            if kept is None:
                self._top_up()
                return
            item, rows, positions = kept
        drift = self._check_schema(item)
        if drift is not None:
            self._drifted(drift, rows, positions)
            return
        if not self._gathering.items:
            self._start_timer()
        self._gathering.add(item, rows, positions)
        if self._gathering.rows >= self.batch_rows:
            self._flush()
        self._top_up()

    def _ended(self) -> None:
        self._maybe_finish()

    # -- items --------------------------------------------------------------------------

    def _positions_of(self, item: Any, rows: int, offset: int) -> Any:
        """The item's positions as `Batch` keeps them; None when they cannot be taken."""
        key = self.positions
        if key is None:
            return (offset, rows)
        try:
            if isinstance(key, str):
                if isinstance(item, Mapping):
                    return [item[key]]
                column = item.column(key)
                return column.combine_chunks() if hasattr(column, "combine_chunks") else column
            return list(key(item))
        except Exception as exc:  # a raising function or a missing column fails the stream
            self._stop_upstream()
            self._lose(PositionSet.from_ranges([(offset, offset + rows)]), rows)
            self._fail_write(
                f"to_spark: cannot take the positions of stream rows "
                f"{offset}..{offset + rows - 1}: {type(exc).__name__}: {exc}",
                where="stream rows",
            )
            return None

    def _skip_committed(self, item: Any, rows: int, positions: Any) -> Any:
        """Drop and report what the target committed already; what is left, or None."""
        try:
            kept, skipped, done = self._committed.split(item, rows, positions)
        except PartlyCommitted as exc:
            self._stop_upstream()
            self._lose(exc.part, rows)
            self._fail_write(str(exc))
            return None
        if done:
            self.rows_skipped += done
            if self.on_commit is not None:  # reported again, under the batches that committed them
                for batch, part in self._committed.by_batch(skipped):
                    self._report(batch, part)
        return kept

    def _check_schema(self, item: Any) -> str | None:
        schema = getattr(item, "schema", None)
        if schema is None:  # a row mapping: converted and checked on the worker
            return None
        if isinstance(self.positions, str):
            index = schema.get_field_index(self.positions)
            if index >= 0:
                schema = schema.remove(index)
        if self._schema is None:
            self._schema = schema
            return None
        if schema is self._schema:
            return None
        return schema_difference(schema, self._schema)

    def _drifted(self, drift: str, rows: int, positions: Any) -> None:
        """An item that does not fit: land what came before it, then fail naming the column."""
        self._stop_upstream()
        self._lose_item(rows, positions)
        message = f"to_spark: the schema of {self.target} is fixed; {drift}"
        self._write_failure = (message, None, None)
        self._upstream_error = SparkWriteError(message, not_landed=PositionSet(), rows=0)
        self._maybe_finish()

    # -- batching -----------------------------------------------------------------------

    def _top_up(self) -> None:
        """Request enough items to fill the batch being gathered, unless two batches are being
        written (then the sink holds two batches already)."""
        if not self._ready or self._upstream_done or self._error is not None:
            return
        if len(self._writing) >= 2:
            return
        if self._items_seen == 0:
            wanted = 1  # the first item tells how many rows an item carries
        else:
            room = self.batch_rows - self._gathering.rows
            if room <= 0:
                return
            wanted = math.ceil(room / max(self._rows_per_item, 1.0))
        self._demand.top_up(wanted)

    def _start_timer(self) -> None:
        loop = self._loop
        if loop is not None and self._timer is None and self.max_latency > 0:
            self._timer = loop.call_later(self.max_latency, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        self._due = True
        self._flush()

    def _flush(self, *, empty: bool = False) -> None:
        """Hand the gathered batch to a worker, unless two are in flight (or one while the
        schema is not fixed yet: the first batch of row mappings fixes it)."""
        in_flight = len(self._writing)
        if in_flight >= (2 if self._schema is not None else 1) or self._error is not None:
            return
        if not self._ready:
            return
        if not self._gathering.items and not empty:
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._due = False
        batch, self._gathering = self._gathering, Batch()
        self._write(batch)

    def _write(self, batch: Batch) -> None:
        self._writing.append(batch)
        self._stages += 1
        after, self._turn = self._turn, threading.Event()
        turn = (after, self._turn)
        args = (batch, self._stages - 1, self._schema, after)
        self._start(self._lander.land, self._landed, *args, turn=turn)

    # -- the worker's side --------------------------------------------------------------

    def _start(
        self,
        job: Callable[..., Any],
        done: Callable[[Any], None],
        *args: Any,
        turn: _Turn = (None, None),
    ) -> None:
        start_thread(self._work, job, done, turn, *args, name="reactive_aio-to_spark")

    def _work(
        self, job: Callable[..., Any], done: Callable[[Any], None], turn: _Turn, *args: Any
    ) -> None:
        """Worker thread: run *job*; its result (or error) goes to *done* on the loop, after
        the outcome of the job whose turn comes before."""
        after, mine = turn
        try:
            try:
                outcome = job(*args)
            except Exception as exc:
                outcome = exc
            if after is not None:
                after.wait()
            loop = self._loop
            assert loop is not None
            try:
                loop.call_soon_threadsafe(done, outcome)
            except RuntimeError:
                # The loop is gone: nobody waits for the outcome, and nobody will end this
                # sink, so it stops being a writer of the target here.
                self._lander.detach()
        finally:
            if mine is not None:
                mine.set()

    # -- outcomes, back on the loop -----------------------------------------------------

    def _attached(self, outcome: Recovered | BaseException) -> None:
        if isinstance(outcome, BaseException):
            self._stop_upstream()
            self._fail_write(f"to_spark: cannot land in {self.target}: {outcome}", outcome)
            return
        self._ready = True
        for record in outcome.records:
            self._committed.remember(record)
        self._schema = outcome.schema if outcome.schema is not None else self.schema
        if self._error is not None:
            self._maybe_finish()
            return
        if self.schema is not None and outcome.schema is not None:
            problem = schema_difference(self.schema, outcome.schema)
            if problem is not None:
                self._stop_upstream()
                self._fail_write(f"to_spark: schema= does not fit {self.target}: {problem}")
                return
        self._top_up()
        self._maybe_finish()

    def _landed(self, outcome: Landed | BaseException) -> None:
        batch = self._writing[0]
        if isinstance(outcome, BaseException):
            self._writing.popleft()
            self._stop_upstream()
            self._lose(batch.position_set(), batch.rows)
            self._fail_write(f"to_spark: writing to {self.target} failed: {outcome}", outcome)
            self._maybe_finish()
            return
        for news in outcome.news:
            self._committed.remember(news)
        record = outcome.record
        if record is None:
            self._refilter(batch)
            return
        self._writing.popleft()
        self.rows_written += record.rows
        self.writes += 1
        if self._schema is None:  # row mappings fixed it on the worker
            self._schema = outcome.schema
        self._committed.remember(record)
        self._report(record.batch, record.positions if self.positions else batch.position_set())
        self._next_batch_or_end()

    def _refilter(self, batch: Batch) -> None:
        """Write *batch* again without what other writers committed meanwhile (reported as
        skipped), or fail as an item found partly committed on arrival fails. The batch
        stays the one being written meanwhile, so reports cannot settle the sink."""
        kept = Batch()
        for index, (item, positions) in enumerate(zip(batch.items, batch.positions, strict=True)):
            left = self._skip_committed(item, rows_in(item), positions)
            if self._error is not None:  # partly committed: nothing from here on lands
                rest = batch.items[index + 1 :]
                self._lose(kept.position_set(), kept.rows)
                self._lose(
                    Batch(rest, 0, batch.positions[index + 1 :]).position_set(),
                    sum(map(rows_in, rest)),
                )
                break
            if left is not None:
                kept.add(*left)
        else:
            if kept.rows == batch.rows:  # the log and this sink disagree: never retry forever
                self._stop_upstream()
                self._lose(kept.position_set(), kept.rows)
                self._fail_write(
                    f"to_spark: {self.target}'s log conflicts with what this sink knows"
                )
            elif kept.items:
                self._writing.popleft()
                self._write(kept)
                return
        self._writing.popleft()
        self._next_batch_or_end()

    def _next_batch_or_end(self) -> None:
        if self._gathering.rows >= self.batch_rows or self._due:
            self._flush()
        self._top_up()
        self._maybe_finish()

    def _report(self, batch_id: int, positions: PositionSet) -> None:
        if self.on_commit is None:
            return
        reports = self._reports
        if reports and reports[-1][0] == batch_id:  # redeliveries waiting for the same batch
            reports[-1] = (batch_id, reports[-1][1] | positions)
            return
        reports.append((batch_id, positions))
        self._pump()

    def _pump(self) -> None:
        """Report to the listener in order; an awaitable result holds the next report back."""
        listener = self.on_commit
        assert listener is not None
        while self._reports and not self._reporting:
            batch_id, positions = self._reports.popleft()
            try:
                result = listener.committed(batch_id, positions)
            except Exception as exc:
                self._listener_failed(exc)
                return
            if result is not None:
                self._reporting = True
                asyncio.ensure_future(result, loop=self._loop).add_done_callback(self._reported)
                return
        self._maybe_finish()

    def _reported(self, task: asyncio.Future[None]) -> None:
        self._reporting = False
        error = asyncio.CancelledError() if task.cancelled() else task.exception()
        if error is not None:
            self._listener_failed(error)
            return
        self._pump()

    def _listener_failed(self, error: BaseException) -> None:
        self._reports.clear()
        self._stop_upstream()
        failure = RuntimeError(f"to_spark: on_commit failed (the batch stays committed): {error!r}")
        failure.__cause__ = error
        self._fail(failure)

    # -- ending -------------------------------------------------------------------------

    def _stop_upstream(self) -> None:
        upstream = self._demand.upstream
        if not self._upstream_done:
            self._upstream_done = True
            self._cancelled = True
            if upstream is not None:
                upstream.cancel()

    def _lose_item(self, rows: int, positions: Any) -> None:
        part = Batch()
        part.add(None, rows, positions)
        self._lose(part.position_set(), rows)

    def _lose(self, positions: PositionSet, rows: int) -> None:
        if rows:
            self._lost.append(positions)
            self._lost_rows += rows

    def _write_error(
        self, message: str, cause: BaseException | None = None, *, where: str | None = None
    ) -> SparkWriteError:
        """An error naming every record that did not land so far."""
        lost = PositionSet().union(*self._lost)
        if where is None:
            where = "source positions" if self.positions is not None else "stream rows"
        error = SparkWriteError(
            f"{message}; {self._lost_rows} rows did not land: {where} {lost.describe()}",
            not_landed=lost,
            rows=self._lost_rows,
        )
        if cause is not None:
            error.__cause__ = cause
        return error

    def _maybe_finish(self) -> None:
        """Flush what is left once upstream is done; settle `wait` once nothing is in flight."""
        if self._writing or self._reporting or self._reports or self._detaching:
            return
        if self._error is not None:
            self._let_go()
            return
        if not self._upstream_done or not self._ready:
            return
        if self._gathering.items:
            self._flush()
            return
        if (
            self._committed.batches == 0
            and self._upstream_error is None
            and self._schema is not None
        ):
            # A target that never got a batch still gets its schema, so it can be read.
            self._flush(empty=True)
            return
        self._let_go()

    def _let_go(self) -> None:
        """Settle once this sink is no writer of the target any more (its lock released)."""
        if self._lander.writer is None:
            self._conclude()
            return
        self._detaching = True
        self._start(self._lander.detach, self._detached)

    def _detached(self, outcome: object) -> None:
        self._detaching = False
        if isinstance(outcome, BaseException):
            report_error(outcome, f"to_spark could not release {self.target}", self._loop)
        self._conclude()

    def _conclude(self) -> None:
        error = self._error if self._error is not None else self._upstream_error
        if error is not None and self._write_failure is not None:
            message, cause, where = self._write_failure  # named now: with items in flight
            error = self._write_error(message, cause, where=where)
        self._settle(self.rows_written, error)

    def _fail_write(
        self, message: str, cause: BaseException | None = None, *, where: str | None = None
    ) -> None:
        """Fail because records did not land; the error will name all of them."""
        if self._error is None:
            self._write_failure = (message, cause, where)
        self._fail(SparkWriteError(message, not_landed=PositionSet(), rows=0))

    def _fail(self, error: BaseException) -> None:
        if self._error is not None:
            return
        if self._get_future().done():
            if not isinstance(error, asyncio.CancelledError):
                report_error(error, "to_spark failed after it finished", self._loop)
            return
        self._error = error
        if self._gathering.items:
            self._lose(self._gathering.position_set(), self._gathering.rows)
            self._gathering = Batch()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._maybe_finish()


def to_spark(
    path: str | os.PathLike[str] | None = None,
    *,
    table: str | None = None,
    spark: Any = None,
    batch_rows: int = 100_000,
    max_latency: float = 5.0,
    mode: WriteMode = "append",
    format: str = "parquet",
    schema: Any = None,
    partition_by: Sequence[str] = (),
    positions: Positions | None = None,
    on_commit: CommitListener[Any] | None = None,
    engine: Engine = "auto",
) -> SparkSink:
    """A subscriber that lands Arrow batches/tables or row mappings for Spark, exactly once.

    Args:
        path: The target directory: a local path or a URI pyarrow knows (``hdfs://…``,
            ``s3://…``).
        table: Instead of *path*, an existing file-based table (``db.events``): the sink lands
            in the table's location under the same protocol, then refreshes the table.
        spark: The SparkSession: needed for *table* and for the ``spark`` engine.
        batch_rows: Rows per batch (one commit; one file, or one per partition value).
        max_latency: Seconds after which a partial batch is written anyway (0: never).
        mode: ``append`` continues the target and its commit log (a rerun skips what it
            committed), ``overwrite`` empties it first, ``error`` refuses a non-empty target.
        format: The file format; the ``arrow`` engine writes ``parquet``.
        schema: The target's ``pyarrow.Schema`` (needed for row mappings with nulls);
            otherwise the first batch fixes it. A batch that drifts from it is an error.
        partition_by: Columns to partition the files by (Hive layout, ``col=value/``).
        positions: What names an item's records in the source's terms: the name of a column
            (or mapping key) with one position per row, which is then not landed; or a
            function from an item to the positions it covers. Kept in the commit records.
        on_commit: A `reactive_aio.CommitListener` told of every committed batch.
        engine: ``arrow`` writes Parquet with pyarrow (the default for ``parquet``);
            ``spark`` writes each batch with a Spark job (any format Spark writes). The
            ``arrow`` engine dictionary-encodes every column until a batch of 10,000 rows or
            more has landed, then only the columns whose dictionary made that batch's files
            smaller than plain values (the test Spark's own Parquet writer makes): for
            columns of distinct values (ids, measurements) building the dictionary is most
            of the writing time.

    Returns:
        A `SparkSink`: subscribe it, then ``rows = await sink``.

    Backpressure: bounded; see the module docs.
    """
    if (path is None) == (table is None):
        raise ValueError("to_spark needs exactly one target: a path, or table=")
    if batch_rows <= 0:
        raise ValueError(f"batch_rows must be > 0, got {batch_rows}")
    if max_latency < 0:
        raise ValueError(f"max_latency must be >= 0, got {max_latency}")
    if mode not in ("append", "overwrite", "error"):
        raise ValueError(f"mode must be 'append', 'overwrite' or 'error', got {mode!r}")
    chosen: Literal["arrow", "spark"] = (
        engine if engine != "auto" else ("arrow" if format == "parquet" else "spark")
    )
    if chosen == "arrow" and format != "parquet":
        raise ValueError(f"the arrow engine writes parquet, not {format!r}: use engine='spark'")
    if spark is None and (chosen == "spark" or table is not None):
        raise ValueError("to_spark needs spark= for a table or the spark engine")
    target = os.fspath(path) if path is not None else str(table)
    run = uuid.uuid4().hex[:12]
    lander = Lander(target, table, spark, chosen, format, tuple(partition_by), positions, run)
    return SparkSink(lander, batch_rows, max_latency, mode, schema, on_commit)
