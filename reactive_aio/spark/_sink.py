"""``to_spark``: a subscriber that lands a stream in Parquet (or a table) through Spark, in batches.

Backpressure: bounded; the sink requests roughly one batch worth of items, gathers them until
*batch_rows* rows or *max_latency* seconds since the first buffered item, hands the batch to a
writer thread, and requests more only once Spark has committed that write. A Spark write has
a fixed cost of a job (~0.15 s and up), so writing few large batches is the design.
Errors: a failed write cancels upstream and fails `SparkSink.wait` with Spark's error, naming
how many rows did not land. An upstream error first lands what is buffered, then fails `wait`.
Loop: needs a running event loop at subscribe time (for the latency timer and the hand-over
from the writer thread); the loop never waits on Spark.
"""

from __future__ import annotations

__all__ = ("SinkStatistics", "SparkSink", "to_spark")

import asyncio
import math
from collections.abc import Generator, Sequence
from pathlib import Path
from typing import Any, Literal, final

import attrs

from .._core import Subscriber, Subscription, current_loop, report_error, require_not_none
from ._session import is_connect
from ._threads import start_thread

WriteMode = Literal["append", "overwrite", "error", "ignore"]


@final
@attrs.frozen
class SinkStatistics:
    """A snapshot of a `SparkSink`."""

    rows_received: int
    rows_written: int
    writes: int
    buffered_rows: int
    outstanding_demand: int
    """Items requested from upstream and not received yet."""
    writing: bool


class SparkWriteError(RuntimeError):
    """A batch could not be written; the message says how many rows did not land."""


def _rows_in(item: Any) -> int:
    rows = getattr(item, "num_rows", None)
    return 1 if rows is None else int(rows)


def _to_table(items: Sequence[Any], schema: Any) -> Any:
    """Arrow batches/tables go straight into one table; mappings are converted as rows."""
    import pyarrow as pa

    tables: list[Any] = []
    rows: list[Any] = []
    for item in items:
        if isinstance(item, pa.RecordBatch):
            tables.append(pa.Table.from_batches([item]))
        elif isinstance(item, pa.Table):
            tables.append(item)
        else:
            rows.append(item)
    if rows:
        try:
            tables.append(pa.Table.from_pylist(rows, schema=schema))
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError) as exc:
            raise TypeError(f"to_spark: cannot convert rows to Arrow: {exc}") from exc
    if schema is not None:
        tables = [t if t.schema == schema else t.cast(schema) for t in tables]
    if len(tables) == 1:
        return tables[0]
    return pa.concat_tables(tables, promote_options="default")


@final
@attrs.define(eq=False)
class SparkSink(Subscriber[Any]):
    """Writes what it receives to *target* through Spark; see `to_spark`.

    Await `wait` (or the sink itself) for the number of rows written.
    """

    target: str
    spark: Any
    batch_rows: int = 100_000
    max_latency: float = 5.0
    mode: WriteMode = "append"
    format: str = "parquet"
    schema: Any = None
    partition_by: tuple[str, ...] = ()
    is_table: bool = False
    _upstream: Subscription | None = attrs.field(default=None, init=False)
    _loop: asyncio.AbstractEventLoop | None = attrs.field(default=None, init=False)
    _future: asyncio.Future[int] | None = attrs.field(default=None, init=False)
    _buffer: list[Any] = attrs.field(factory=list, init=False)
    _buffered_rows: int = attrs.field(default=0, init=False)
    _outstanding: int = attrs.field(default=0, init=False)
    _rows_per_item: float = attrs.field(default=0.0, init=False)
    _items_seen: int = attrs.field(default=0, init=False)
    _writing: bool = attrs.field(default=False, init=False)
    _timer: asyncio.TimerHandle | None = attrs.field(default=None, init=False)
    _due: bool = attrs.field(default=False, init=False)
    _upstream_done: bool = attrs.field(default=False, init=False)
    _upstream_error: BaseException | None = attrs.field(default=None, init=False)
    _failed: bool = attrs.field(default=False, init=False)
    _first_write: bool = attrs.field(default=True, init=False)
    rows_received: int = attrs.field(default=0, init=False)
    rows_written: int = attrs.field(default=0, init=False)
    writes: int = attrs.field(default=0, init=False)

    # -- awaiting -----------------------------------------------------------------------

    def _get_future(self) -> asyncio.Future[int]:
        if self._future is None:
            loop = self._loop or asyncio.get_running_loop()
            self._loop = loop
            self._future = loop.create_future()
        return self._future

    async def wait(self) -> int:
        """Wait until the stream ended and everything was written; return the rows written.

        Raises:
            SparkWriteError: a write failed (upstream was cancelled).
            Exception: the upstream error, after what was buffered has been written.
        """
        return await asyncio.shield(self._get_future())

    def __await__(self) -> Generator[Any, None, int]:
        return self.wait().__await__()

    def statistics(self) -> SinkStatistics:
        """A snapshot for progress displays."""
        return SinkStatistics(
            self.rows_received,
            self.rows_written,
            self.writes,
            self._buffered_rows,
            self._outstanding,
            self._writing,
        )

    def cancel(self) -> None:
        """Stop: cancel upstream; what is buffered is not written and `wait` fails."""
        upstream = self._upstream
        if upstream is not None:
            upstream.cancel()
        self._fail(asyncio.CancelledError())

    # -- Subscriber ---------------------------------------------------------------------

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "2.13", "on_subscribe's subscription")
        if self._upstream is not None:
            subscription.cancel()  # rule 2.5
            return
        self._upstream = subscription
        loop = current_loop()
        if loop is None:
            subscription.cancel()
            raise RuntimeError("to_spark needs a running event loop")
        if self._loop is None:
            self._loop = loop
        self._get_future()
        # The first item tells how many rows an item carries; ask for one to learn it.
        self._outstanding = 1
        subscription.request(1)

    def on_next(self, item: Any) -> None:
        require_not_none(item, "2.13", "on_next's item")
        if self._failed or self._upstream_done:
            return
        rows = _rows_in(item)
        self._outstanding -= 1
        self.rows_received += rows
        # A running mean of rows per item sizes the next request to about one batch.
        self._items_seen += 1
        self._rows_per_item += (rows - self._rows_per_item) / min(self._items_seen, 64)
        if not self._buffer:
            self._start_timer()
        self._buffer.append(item)
        self._buffered_rows += rows
        if self._buffered_rows >= self.batch_rows:
            self._flush()
        self._top_up()

    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        if self._upstream_done:
            return
        self._upstream_done = True
        self._upstream_error = error
        self._flush()
        self._maybe_finish()

    def on_complete(self) -> None:
        if self._upstream_done:
            return
        self._upstream_done = True
        self._flush()
        self._maybe_finish()

    # -- batching -----------------------------------------------------------------------

    def _top_up(self) -> None:
        """Request enough items for the rest of the batch, unless a write is in flight."""
        if self._writing or self._upstream_done or self._failed or self._upstream is None:
            return
        per_item = max(self._rows_per_item, 1.0)
        wanted = math.ceil(max(self.batch_rows - self._buffered_rows, 1) / per_item)
        missing = wanted - self._outstanding
        if missing > 0:
            self._outstanding += missing
            self._upstream.request(missing)

    def _start_timer(self) -> None:
        loop = self._loop
        if loop is not None and self._timer is None and self.max_latency > 0:
            self._timer = loop.call_later(self.max_latency, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        self._due = True
        self._flush()

    def _flush(self) -> None:
        """Hand the buffer to the writer thread unless a write is already in flight."""
        if self._writing or not self._buffer or self._failed:
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._due = False
        items, rows = self._buffer, self._buffered_rows
        self._buffer, self._buffered_rows = [], 0
        self._writing = True
        mode = self.mode if self._first_write else "append"
        self._first_write = False
        start_thread(self._write, items, rows, mode, name="reactive_aio-to_spark")

    def _write(self, items: list[Any], rows: int, mode: str) -> None:
        """Worker thread: one Spark write; the outcome goes back to the loop."""
        error: BaseException | None = None
        try:
            table = _to_table(items, self.schema)
            del items
            df = self.spark.createDataFrame(table)
            # createDataFrame makes one partition per Arrow batch of 10k rows; fewer, larger
            # files are faster to write and to read back.
            parallelism = (
                2 if is_connect(self.spark) else self.spark.sparkContext.defaultParallelism
            )
            parallelism = max(1, int(parallelism))
            df = df.coalesce(max(1, min(parallelism, math.ceil(table.num_rows / 100_000))))
            writer = df.write.mode(mode).format(self.format)
            if self.partition_by:
                writer = writer.partitionBy(*self.partition_by)
            if self.is_table:
                writer.saveAsTable(self.target)
            else:
                writer.save(self.target)
        except Exception as exc:
            error = SparkWriteError(
                f"to_spark: writing {rows} rows to {self.target} failed; they did not land: {exc}"
            )
            error.__cause__ = exc
        loop = self._loop
        assert loop is not None
        try:
            loop.call_soon_threadsafe(self._written, rows, error)
        except RuntimeError:  # the loop is gone; nobody waits for the outcome any more
            pass

    def _written(self, rows: int, error: BaseException | None) -> None:
        self._writing = False
        if error is not None:
            upstream = self._upstream
            if upstream is not None and not self._upstream_done:
                upstream.cancel()
            self._fail(error)
            return
        self.rows_written += rows
        self.writes += 1
        if self._buffer and (
            self._buffered_rows >= self.batch_rows or self._due or self._upstream_done
        ):
            self._flush()
        self._top_up()
        self._maybe_finish()

    def _maybe_finish(self) -> None:
        if not self._upstream_done or self._writing or self._buffer or self._failed:
            return
        future = self._get_future()
        if future.done():
            return
        if self._upstream_error is not None:
            future.set_exception(self._upstream_error)
        else:
            future.set_result(self.rows_written)

    def _fail(self, error: BaseException) -> None:
        if self._failed:
            return
        self._failed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._buffer.clear()
        self._buffered_rows = 0
        future = self._get_future()
        if not future.done():
            future.set_exception(error)
        elif not isinstance(error, asyncio.CancelledError):
            report_error(error, "to_spark failed after it finished", self._loop)


def to_spark(
    target: str | Path,
    *,
    spark: Any,
    batch_rows: int = 100_000,
    max_latency: float = 5.0,
    mode: WriteMode = "append",
    format: str = "parquet",
    schema: Any = None,
    partition_by: Sequence[str] = (),
    table: bool | None = None,
) -> SparkSink:
    """A subscriber that writes a stream of Arrow batches/tables or row dicts through Spark.

    Args:
        target: A directory (``/data/events``, ``s3a://…``) or, with ``table=True`` or a bare
            dotted name such as ``db.events``, a table name for ``saveAsTable``.
        spark: The SparkSession to write with.
        batch_rows: Rows gathered per write.
        max_latency: Seconds after which a partial batch is written anyway (0: never).
        mode: Spark save mode of the first write; later writes of the same sink append.
        format: Spark data source of the files (``parquet``, ``orc``, ``json``…).
        schema: A ``pyarrow.Schema`` to convert items to (needed for row dicts with nulls).
        partition_by: Columns to partition the files by.
        table: Force table (True) or path (False) interpretation of *target*.

    Returns:
        A `SparkSink`: subscribe it, then ``rows = await sink``.

    Backpressure: bounded; see the module docs.
    """
    if batch_rows <= 0:
        raise ValueError(f"batch_rows must be > 0, got {batch_rows}")
    if max_latency < 0:
        raise ValueError(f"max_latency must be >= 0, got {max_latency}")
    text = str(target)
    is_table = table if table is not None else ("/" not in text and ":" not in text)
    return SparkSink(
        text,
        spark,
        batch_rows,
        max_latency,
        mode,
        format,
        schema,
        tuple(partition_by),
        is_table,
    )
