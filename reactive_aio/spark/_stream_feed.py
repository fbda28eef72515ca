"""``to_spark_stream``: a Spark streaming DataFrame fed by a publisher, resumable from Spark's checkpoint.

The feed subscribes to the source and keeps what it receives as Arrow record batches in a
bounded buffer, served over a local TCP socket to a Python streaming data source
(`FeedDataSource`, in Spark's own Python processes). Spark pulls: each micro-batch asks how
far the feed has got (at most *rows_per_batch* rows past the last micro-batch), reads that
range as Arrow IPC, and commits it once the micro-batch is done; the commit frees buffer
space and only then is more requested upstream.

Offsets are source positions (row *n* of the source is at position *n*), and Spark keeps
them in the query's checkpoint. A feed does not know where it starts until the query's
first call: a new query starts at 0; a query restarted from its checkpoint asks for the
rows after the last committed micro-batch, or re-reads the micro-batch it had planned
when the driver died. A replayable source (a function from a position to a publisher that
emits from there) is started at that position, so nothing is lost or repeated. A plain
publisher cannot go back: its rows are numbered from where the query resumes, and a
planned micro-batch it cannot serve again fails the query with one line naming the range.

Spark commits a micro-batch only when it plans the next, and plans one only when new rows
are there, so the buffer must hold a whole micro-batch plus at least the start of the next:
*capacity* is at least twice *rows_per_batch*, or the query stalls with a full buffer.

Backpressure: bounded; at most *capacity* rows (plus one item) are held or requested and
not yet committed by Spark.
Errors: an upstream error fails the query once every row received before it was read; a row
that does not fit the schema fails `SparkStreamFeed.completed`, cancels upstream, and fails
the query after the rows before it were read. The query reading the feed terminating before
the source ended (an error or ``query.stop()``) cancels upstream and fails ``completed(query)``
with an error naming the query, Spark's exception as its cause.
Loop: needs a running event loop when created; the socket is served by its own threads and
upstream demand is handed back to the loop.
"""

from __future__ import annotations

__all__ = ("SparkStreamFeed", "to_spark_stream")

import asyncio
import hmac
import json
import math
import secrets
import socketserver
import threading
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any, final

import attrs

from .._core import (
    DemandWindow,
    Publisher,
    Subscriber,
    Subscription,
    current_loop,
    require_not_none,
)
from ._threads import start_thread, to_thread

Replay = Callable[[int], Publisher[Any]]

_WAIT_FOR_ROWS = 600.0
"""Seconds a read of a replayed range waits for the source to produce it."""


class _Lost(LookupError):
    """Rows Spark planned before a restart that the source cannot produce again."""


@final
@attrs.define(eq=False)
class SparkStreamFeed(Subscriber[Any]):
    """The subscriber behind `to_spark_stream`; ``feed.df`` is the streaming DataFrame."""

    spark: Any
    schema: str
    capacity: int
    rows_per_batch: int
    replay: Replay | None
    arrow_schema: Any
    """The ``pyarrow.Schema`` rows are served in (what Spark expects of *schema*)."""
    df: Any = attrs.field(default=None, init=False)
    """The streaming DataFrame; start a query on it (off the event loop: ``start`` blocks)."""
    address: str = attrs.field(default="", init=False)
    rows_received: int = attrs.field(default=0, init=False)
    rows_committed: int = attrs.field(default=0, init=False)
    """Rows Spark committed through this feed."""
    start: int | None = attrs.field(default=None, init=False)
    """The source position of this feed's first row, once the query has asked for it."""
    _token: str = attrs.field(factory=lambda: secrets.token_hex(16), init=False)
    _lock: threading.Condition = attrs.field(factory=threading.Condition, init=False)
    _batches: deque[Any] = attrs.field(factory=deque, init=False)
    """Received rows, from position ``_base`` on, in the served schema."""
    _base: int = attrs.field(default=0, init=False)
    _buffered: int = attrs.field(default=0, init=False)
    _rows: list[Any] = attrs.field(factory=list, init=False)
    """Rows received as mappings or sequences, converted to Arrow at the end of a loop turn."""
    _converting: bool = attrs.field(default=False, init=False)
    _demand: DemandWindow = attrs.field(factory=DemandWindow, init=False)
    """Upstream and what it was asked for and has not delivered yet."""
    _loop: asyncio.AbstractEventLoop | None = attrs.field(default=None, init=False)
    _ended: asyncio.Future[int] | None = attrs.field(default=None, init=False)
    _upstream_done: bool = attrs.field(default=False, init=False)
    _upstream_error: BaseException | None = attrs.field(default=None, init=False)
    _rows_per_item: float = attrs.field(default=0.0, init=False)
    _items_seen: int = attrs.field(default=0, init=False)
    _server: socketserver.ThreadingTCPServer | None = attrs.field(default=None, init=False)
    _serving: threading.Thread | None = attrs.field(default=None, init=False)

    # -- the caller's side --------------------------------------------------------------

    async def completed(self, query: Any = None) -> int:
        """Wait until the source ended and every row is in the buffer; return the rows received.

        Rows may still be on their way into Spark: ``query.processAllAvailable()`` after this
        returns waits for them. Raises the upstream error, or why a row was refused. With a
        replayable source, the source starts only when the query first asks for rows.

        Args:
            query: The streaming query reading ``feed.df``. Without it, a query that dies
                stops pulling rows and the wait never ends (the source waits for room in
                the buffer); with it, the query terminating before the source ended (with an
                error, or stopped by ``query.stop()``) cancels upstream and fails the wait
                with a `RuntimeError` naming the query, Spark's exception as its cause.
        """
        ended = self._ended
        assert ended is not None, "the feed was never started"
        if query is None or ended.done():
            return await asyncio.shield(ended)
        from ._query_watch import QueryWatch

        watch = QueryWatch(query, self.spark.streams, self._hand_over_termination)
        await to_thread(watch.start)
        try:
            return await asyncio.shield(ended)
        finally:
            await to_thread(watch.stop)

    def close(self) -> None:
        """Cancel upstream and stop serving; a query still reading from the feed then fails."""
        upstream, self._demand.upstream = self._demand.upstream, None
        if upstream is not None and not self._upstream_done:
            upstream.cancel()
        with self._lock:
            self._upstream_done = True
            self._lock.notify_all()
        self._end(asyncio.CancelledError())
        server, self._server = self._server, None
        if server is not None:
            # shutdown() waits for the serving thread's poll interval: not on the loop.
            start_thread(_stop_server, server, name="reactive_aio-feed-stop")

    async def aclose(self) -> None:
        """`close`, then wait until the serving thread has ended."""
        self.close()
        serving = self._serving
        if serving is not None:
            await asyncio.to_thread(serving.join)

    # -- Subscriber ---------------------------------------------------------------------

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "2.13", "on_subscribe's subscription")
        if self._demand.upstream is not None or self._upstream_done:
            subscription.cancel()  # rule 2.5
            return
        self._demand.upstream = subscription
        self._demand.top_up(1)  # the first item tells how many rows an item carries

    def on_next(self, item: Any) -> None:
        if item is None:
            require_not_none(item, "2.13", "on_next's item")
        if self._upstream_done:
            return
        self._demand.received()
        rows = getattr(item, "num_rows", None)
        if rows is None:
            rows = 1
            self._rows.append(item)
            if not self._converting:
                self._converting = True
                loop = self._loop
                assert loop is not None
                loop.call_soon(self._convert_rows)  # all rows of this loop turn at once
        else:
            try:
                batch = self._fit(item)
            except (KeyError, TypeError, ValueError) as exc:
                self._fail(TypeError(f"to_spark_stream: a batch does not fit {self.schema}: {exc}"))
                return
            self._append(batch)
        self._items_seen += 1
        self._rows_per_item += (rows - self._rows_per_item) / min(self._items_seen, 64)
        self._top_up()

    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        self._convert_rows()
        with self._lock:
            self._upstream_done = True
            self._upstream_error = error
            self._lock.notify_all()
        self._demand.upstream = None
        self._end(error)

    def on_complete(self) -> None:
        self._convert_rows()
        with self._lock:
            if self._upstream_done:  # a refused row ended the stream already
                return
            self._upstream_done = True
            self._lock.notify_all()
        self._demand.upstream = None
        self._end(None)

    # -- rows into Arrow (loop side) ----------------------------------------------------

    def _fit(self, item: Any) -> Any:
        """An Arrow batch or table as one record batch in the served schema."""
        import pyarrow as pa

        table = item if isinstance(item, pa.Table) else pa.Table.from_batches([item])
        table = table.select(self.arrow_schema.names).cast(self.arrow_schema)
        return table.combine_chunks().to_batches()[0] if table.num_rows else None

    def _convert_rows(self) -> None:
        """Rows received as mappings or sequences become one Arrow batch."""
        self._converting = False
        rows, self._rows = self._rows, []
        if not rows or self._upstream_done:
            return
        try:
            batch = _rows_to_batch(rows, self.arrow_schema)
        except (KeyError, TypeError, ValueError) as exc:
            bad = _first_bad_row(rows, self.arrow_schema)
            good = _rows_to_batch(rows[:bad], self.arrow_schema) if bad else None
            if good is not None:
                self._append(good)
            self._fail(
                TypeError(f"to_spark_stream: row {rows[bad]!r} does not fit {self.schema}: {exc}")
            )
            return
        self._append(batch)

    def _append(self, batch: Any) -> None:
        if batch is None:
            return
        with self._lock:
            self._batches.append(batch)
            self._buffered += batch.num_rows
            self.rows_received += batch.num_rows
            self._lock.notify_all()

    def _fail(self, error: BaseException) -> None:
        """The feed fails: upstream is cancelled, the rows before stay served, and the query
        reading them (if it is still running) fails once it read them."""
        upstream, self._demand.upstream = self._demand.upstream, None
        if upstream is not None:
            upstream.cancel()
        with self._lock:
            self._upstream_done = True
            self._upstream_error = error
            self._lock.notify_all()
        self._end(error)

    def _hand_over_termination(self, query: str, error: BaseException | None) -> None:
        """Listener thread: the query reading the feed terminated; the loop takes it from here."""
        loop = self._loop
        assert loop is not None
        try:
            loop.call_soon_threadsafe(self._query_terminated, query, error)
        except RuntimeError:  # the loop is closed: nobody waits any more
            pass

    def _query_terminated(self, query: str, error: BaseException | None) -> None:
        ended = self._ended
        if ended is None or ended.done():  # the source had ended: the rest is Spark's
            return
        if error is None:
            reason = "stopped without an error"
        else:
            first_line = str(error).strip().split("\n", 1)[0]
            reason = f"failed ({first_line})"
        failure = RuntimeError(
            f"to_spark_stream: the streaming query {query} reading the feed {reason} before "
            f"the source ended ({self.rows_received} rows received, "
            f"{self.rows_committed} committed by Spark); upstream is cancelled"
        )
        failure.__cause__ = error
        self._fail(failure)

    def _top_up(self) -> None:
        """Request items while the rows held and asked for stay within *capacity*."""
        if self._upstream_done or self._items_seen == 0:
            return
        per_item = max(self._rows_per_item, 1.0)
        room = self.capacity - self._buffered - len(self._rows)
        self._demand.top_up(math.floor(room / per_item))

    def _end(self, error: BaseException | None) -> None:
        ended = self._ended
        if ended is None or ended.done():
            return
        if error is None:
            ended.set_result(self.rows_received)
        else:
            ended.set_exception(error)
            if isinstance(error, asyncio.CancelledError):
                ended.exception()  # closing without awaiting is not a lost error

    def _subscribe_source(self, start: int) -> None:
        """Loop side: the query told where to start; a replayable source starts there."""
        if self.replay is None or self._upstream_done:
            return
        try:
            publisher = self.replay(start)
        except Exception as exc:  # the replay function fails the feed like a source error
            self.on_error(exc)
            return
        publisher.subscribe(self)

    # -- the server (its own threads) ---------------------------------------------------

    def answer(self, request: dict[str, Any]) -> Any:
        """One request of the data source: the answer, or raise what to report to Spark."""
        if not hmac.compare_digest(str(request.get("token", "")), self._token):
            raise PermissionError("wrong token")
        op = request.get("op")
        if op == "latest":
            return self._latest(int(request["start"]))
        if op == "read":
            begin, stop = int(request["start"]), int(request["end"])
            return self._read(int(request.get("batch", begin)), begin, stop)
        if op == "commit":
            self._commit(int(request["end"]))
            return None
        raise ValueError(f"unknown request {op!r}")

    def _anchor(self, start: int, *, replanned: int | None = None) -> None:
        """Under the lock: the query's first request says where this feed's rows begin."""
        if self.start is not None:
            return
        if self.replay is None and replanned is not None:
            raise _Lost(
                f"rows {start}..{replanned - 1} were in a micro-batch planned before the "
                "query restarted and the source cannot replay them: they are lost (give "
                "to_spark_stream a replayable source, a function from a position to a publisher)"
            )
        self.start = self._base = start
        if self.replay is not None:
            loop = self._loop
            assert loop is not None
            loop.call_soon_threadsafe(self._subscribe_source, start)

    def _latest(self, start: int) -> int:
        with self._lock:
            self._anchor(start)
            end = self._base + self._buffered
            if start >= end and self._upstream_error is not None:
                raise RuntimeError(f"the publisher failed: {self._upstream_error!r}")
            return max(start, min(end, start + self.rows_per_batch))

    def _read(self, first: int, begin: int, stop: int) -> bytes:
        """Rows ``begin..stop-1`` of the micro-batch starting at *first*, as Arrow IPC."""
        import pyarrow as pa

        with self._lock:
            self._anchor(first, replanned=stop)
            # A replayed range may not be there yet: the source was started just now.
            if not self._lock.wait_for(
                lambda: self._base + self._buffered >= stop or self._upstream_done,
                _WAIT_FOR_ROWS,
            ):
                raise TimeoutError(f"rows {begin}..{stop - 1} did not arrive in time")
            end = self._base + self._buffered
            if begin < self._base or stop > end:
                raise LookupError(
                    f"rows {begin}..{stop - 1} are not in the feed's buffer "
                    f"({self._base}..{end - 1})"
                )
            slices = []
            position = self._base
            for batch in self._batches:
                low, high = max(begin, position), min(stop, position + batch.num_rows)
                if low < high:
                    slices.append(batch.slice(low - position, high - low))
                position += batch.num_rows
                if position >= stop:
                    break
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, self.arrow_schema) as writer:
            for piece in slices:
                writer.write_batch(piece)
        data: bytes = sink.getvalue().to_pybytes()
        return data

    def _commit(self, end: int) -> None:
        with self._lock:
            freed = end - self._base
            if self.start is None or freed <= 0:
                return
            left = freed
            while left and self._batches:
                first = self._batches[0]
                if first.num_rows <= left:
                    self._batches.popleft()
                    left -= first.num_rows
                else:
                    self._batches[0] = first.slice(left)
                    left = 0
            self._base = end
            self._buffered -= freed - left
            self.rows_committed += freed - left
        loop = self._loop
        if loop is not None:
            try:
                loop.call_soon_threadsafe(self._top_up)
            except RuntimeError:  # the loop is gone: nobody to request from any more
                pass


def _rows_to_batch(rows: list[Any], schema: Any) -> Any:
    import pyarrow as pa

    if isinstance(rows[0], Mapping):
        names = set(schema.names)
        for row in rows:
            if not names <= row.keys():
                raise KeyError(f"no column {sorted(names - row.keys())[0]!r}")
        return pa.RecordBatch.from_pylist(rows, schema=schema)
    columns = list(zip(*rows, strict=True))
    if len(columns) != len(schema):
        raise ValueError(f"{len(columns)} values for {len(schema)} columns")
    return pa.RecordBatch.from_arrays(
        [pa.array(column, type=field.type) for column, field in zip(columns, schema, strict=True)],
        schema=schema,
    )


def _first_bad_row(rows: list[Any], schema: Any) -> int:
    import pyarrow as pa

    for index, row in enumerate(rows):
        try:
            _rows_to_batch([row], schema)
        except (KeyError, TypeError, ValueError, pa.ArrowException):
            return index
    return len(rows)


def _stop_server(server: socketserver.ThreadingTCPServer) -> None:
    server.shutdown()
    server.server_close()


class _Handler(socketserver.StreamRequestHandler):
    server: _FeedServer

    def handle(self) -> None:
        from ._feed_source import encode_answer

        try:
            answer = self.server.feed.answer(json.loads(self.rfile.readline()))
        except Exception as exc:
            answer = exc
        self.wfile.write(encode_answer(answer))


class _FeedServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, feed: SparkStreamFeed) -> None:
        self.feed = feed
        super().__init__(("127.0.0.1", 0), _Handler)


def to_spark_stream(
    source: Publisher[Any] | Replay,
    spark: Any,
    *,
    schema: str,
    capacity: int = 500_000,
    rows_per_batch: int | None = None,
    partitions: int | None = None,
) -> SparkStreamFeed:
    """Feed a source's rows into Spark as a streaming DataFrame (``feed.df``).

    Args:
        source: A publisher of rows (Arrow record batches or tables, mappings keyed by
            column name, or sequences in column order); or, to survive a restart of the
            driver, a function from a source position to a publisher that emits from there
            (row *n* of the source is at position *n*).
        spark: A classic SparkSession (Python data sources need Spark 4).
        schema: The columns as a DDL string, e.g. ``"id long, name string"``.
        capacity: Rows held or requested and not yet committed by Spark.
        rows_per_batch: Most rows per micro-batch; default and maximum ``capacity // 2``.
        partitions: Spark tasks per micro-batch (default: the session's parallelism).

    Returns:
        The `SparkStreamFeed`: start a query on ``feed.df`` (with a checkpoint location for
        the restart guarantees), ``await feed.completed(query)`` for the end of the source
        (or the query's error, should it terminate first), ``feed.close()`` when done.

    Raises:
        ValueError: *capacity* is less than twice *rows_per_batch* (the query would stall).
    """
    per_batch = capacity // 2 if rows_per_batch is None else rows_per_batch
    if per_batch <= 0:
        raise ValueError(f"rows_per_batch must be > 0, got {per_batch}")
    if capacity < 2 * per_batch:
        raise ValueError(
            f"capacity ({capacity}) must be at least twice rows_per_batch ({per_batch}): Spark "
            "commits a micro-batch only once the next one has rows, so a buffer holding just "
            "one micro-batch stalls"
        )
    loop = current_loop()
    if loop is None:
        raise RuntimeError("to_spark_stream needs a running event loop")
    from pyspark import cloudpickle
    from pyspark.sql.pandas.types import to_arrow_schema

    from . import _feed_source
    from ._feed_source import FEED_FORMAT, FeedDataSource

    # Spark's Python workers get the data source by value: they need not import reactive_aio
    # (over a second per worker) or even have it installed.
    cloudpickle.register_pickle_by_value(_feed_source)  # type: ignore[no-untyped-call]

    struct = spark.createDataFrame([], schema).schema
    replay = None if isinstance(source, Publisher) else source
    feed = SparkStreamFeed(
        spark, schema, capacity, per_batch, replay, to_arrow_schema(struct, timezone="UTC")
    )
    spark.dataSource.register(FeedDataSource)
    server = _FeedServer(feed)
    feed.address = f"127.0.0.1:{server.server_address[1]}"
    feed._server = server
    feed._serving = threading.Thread(
        target=server.serve_forever, name="reactive_aio-feed", daemon=True
    )
    feed._serving.start()
    split = partitions or max(1, int(spark.sparkContext.defaultParallelism))
    feed.df = (
        spark.readStream.format(FEED_FORMAT)
        .schema(schema)
        .option("address", feed.address)
        .option("token", feed._token)
        .option("partitions", str(split))
        .load()
    )
    feed._loop = loop
    feed._ended = loop.create_future()
    if replay is None:
        assert isinstance(source, Publisher)
        source.subscribe(feed)
    return feed
