"""``to_spark_stream``: a Spark streaming DataFrame fed by a publisher.

The feed subscribes to the publisher and keeps what it receives in a bounded buffer of rows,
served over a local TCP socket to a Python streaming data source (`FeedDataSource`, in Spark's
own Python processes). Spark pulls: each micro-batch asks how far the feed has got (at most
*rows_per_batch* rows past the last micro-batch), reads that range, and commits it once the
micro-batch is done; the commit frees buffer space and only then is more requested upstream.

Spark commits a micro-batch only when it plans the next one, and plans one only when new rows
are there, so the buffer must hold a whole micro-batch plus at least the start of the next:
*capacity* is at least twice *rows_per_batch*, or the query stalls with a full buffer.

Backpressure: bounded; at most *capacity* rows are requested and not yet committed by Spark.
Errors: an upstream error fails the query once every row received before it was read; a row
that does not fit the schema fails `SparkStreamFeed.completed` and cancels upstream.
Loop: needs a running event loop at subscribe time; the socket is served by its own threads
and upstream demand is handed back to the loop.
"""

from __future__ import annotations

__all__ = ("SparkStreamFeed", "to_spark_stream")

import asyncio
import hmac
import json
import secrets
import socketserver
import threading
from collections.abc import Mapping
from typing import Any, final

import attrs

from .._core import Publisher, Subscriber, Subscription, current_loop, require_not_none


@final
@attrs.define(eq=False)
class SparkStreamFeed(Subscriber[Any]):
    """The subscriber behind `to_spark_stream`; ``feed.df`` is the streaming DataFrame."""

    spark: Any
    schema: str
    capacity: int
    rows_per_batch: int
    df: Any = attrs.field(default=None, init=False)
    """The streaming DataFrame; start a query on it (off the event loop: ``start`` blocks)."""
    address: str = attrs.field(default="", init=False)
    rows_received: int = attrs.field(default=0, init=False)
    rows_committed: int = attrs.field(default=0, init=False)
    _fields: tuple[str, ...] = attrs.field(default=(), init=False)
    _token: str = attrs.field(factory=lambda: secrets.token_hex(16), init=False)
    _lock: threading.Lock = attrs.field(factory=threading.Lock, init=False)
    _rows: list[tuple[Any, ...]] = attrs.field(factory=list, init=False)
    """Received rows from position ``rows_committed`` on."""
    _upstream: Subscription | None = attrs.field(default=None, init=False)
    _loop: asyncio.AbstractEventLoop | None = attrs.field(default=None, init=False)
    _ended: asyncio.Future[int] | None = attrs.field(default=None, init=False)
    _upstream_done: bool = attrs.field(default=False, init=False)
    _upstream_error: BaseException | None = attrs.field(default=None, init=False)
    _server: socketserver.ThreadingTCPServer | None = attrs.field(default=None, init=False)

    # -- the caller's side --------------------------------------------------------------

    async def completed(self) -> int:
        """Wait until upstream ended and every row is in the buffer; return the rows received.

        Rows may still be on their way into Spark: ``query.processAllAvailable()`` after this
        returns waits for them. Raises the upstream error, or why a row was refused.
        """
        assert self._ended is not None, "the feed was never subscribed"
        return await asyncio.shield(self._ended)

    def close(self) -> None:
        """Cancel upstream and stop serving; a query still reading from the feed then fails."""
        upstream, self._upstream = self._upstream, None
        if upstream is not None and not self._upstream_done:
            upstream.cancel()
        self._end(asyncio.CancelledError())
        server, self._server = self._server, None
        if server is not None:
            # shutdown() waits for the serving thread's poll interval: not on the loop.
            def stop() -> None:
                server.shutdown()
                server.server_close()

            threading.Thread(target=stop, name="reactive_aio-feed-stop", daemon=True).start()

    # -- Subscriber ---------------------------------------------------------------------

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "2.13", "on_subscribe's subscription")
        if self._upstream is not None or self._upstream_done:
            subscription.cancel()  # rule 2.5
            return
        self._upstream = subscription
        subscription.request(self.capacity)

    def on_next(self, item: Any) -> None:
        require_not_none(item, "2.13", "on_next's item")
        if self._upstream_done:
            return
        try:
            if isinstance(item, Mapping):
                row = tuple(item[name] for name in self._fields)
            else:
                row = tuple(item)
                if len(row) != len(self._fields):
                    raise ValueError(f"{len(row)} values for {len(self._fields)} columns")
        except (KeyError, TypeError, ValueError) as exc:
            upstream, self._upstream = self._upstream, None
            if upstream is not None:
                upstream.cancel()
            self._upstream_done = True
            self._end(TypeError(f"to_spark_stream: row {item!r} does not fit {self.schema}: {exc}"))
            return
        with self._lock:
            self._rows.append(row)
            self.rows_received += 1

    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        with self._lock:
            self._upstream_done = True
            self._upstream_error = error
        self._upstream = None
        self._end(error)

    def on_complete(self) -> None:
        with self._lock:
            self._upstream_done = True
        self._upstream = None
        self._end(None)

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

    def _request_more(self, rows: int) -> None:
        """Loop side: Spark committed *rows*; the buffer has room for that many more."""
        upstream = self._upstream
        if upstream is not None and not self._upstream_done:
            upstream.request(rows)

    # -- the server (its own threads) ---------------------------------------------------

    def answer(self, request: dict[str, Any]) -> Any:
        """One request of the data source; the answer, or raise what to report to Spark."""
        if not hmac.compare_digest(str(request.get("token", "")), self._token):
            raise PermissionError("wrong token")
        op = request.get("op")
        with self._lock:
            end = self.rows_committed + len(self._rows)
            if op == "latest":
                start = request.get("start")
                begin = self.rows_committed if start is None else int(start)
                if begin >= end and self._upstream_error is not None:
                    raise RuntimeError(f"the publisher failed: {self._upstream_error!r}")
                return min(end, begin + self.rows_per_batch)
            if op == "read":
                begin, stop = int(request["start"]), int(request["end"])
                if begin < self.rows_committed or stop > end:
                    raise LookupError(
                        f"rows {begin}..{stop} are not in the buffer "
                        f"({self.rows_committed}..{end}); was the feed restarted?"
                    )
                offset = self.rows_committed
                return self._rows[begin - offset : stop - offset]
            if op == "commit":
                freed = int(request["end"]) - self.rows_committed
                if freed <= 0:
                    return None
                del self._rows[:freed]
                self.rows_committed += freed
            else:
                raise ValueError(f"unknown request {op!r}")
        loop = self._loop
        if loop is not None:
            try:
                loop.call_soon_threadsafe(self._request_more, freed)
            except RuntimeError:  # the loop is gone: nobody to request from any more
                pass
        return None


class _Handler(socketserver.StreamRequestHandler):
    server: _FeedServer

    def handle(self) -> None:
        from ._feed_source import encode_answer

        try:
            answer = ("ok", self.server.feed.answer(json.loads(self.rfile.readline())))
        except Exception as exc:
            answer = ("error", f"{type(exc).__name__}: {exc}")
        self.wfile.write(encode_answer(*answer))


class _FeedServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, feed: SparkStreamFeed) -> None:
        self.feed = feed
        super().__init__(("127.0.0.1", 0), _Handler)


def to_spark_stream(
    publisher: Publisher[Any],
    spark: Any,
    *,
    schema: str,
    capacity: int = 20_000,
    rows_per_batch: int | None = None,
) -> SparkStreamFeed:
    """Feed a publisher's rows into Spark as a streaming DataFrame (``feed.df``).

    Args:
        publisher: Emits rows: mappings keyed by column name, or sequences in column order.
        spark: A classic SparkSession (Python data sources need Spark 4).
        schema: The columns as a DDL string, e.g. ``"id long, name string"``.
        capacity: Rows requested from *publisher* and not yet committed by Spark.
        rows_per_batch: Most rows per micro-batch; default and maximum ``capacity // 2``.

    Returns:
        The `SparkStreamFeed`, already subscribed: start a query on ``feed.df``, ``await
        feed.completed()`` for the end of the publisher, ``feed.close()`` when done.

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
    from ._feed_source import FEED_FORMAT, FeedDataSource

    feed = SparkStreamFeed(spark, schema, capacity, per_batch)
    feed._fields = tuple(spark.createDataFrame([], schema).schema.fieldNames())
    spark.dataSource.register(FeedDataSource)
    server = _FeedServer(feed)
    feed.address = f"127.0.0.1:{server.server_address[1]}"
    feed._server = server
    threading.Thread(target=server.serve_forever, name="reactive_aio-feed", daemon=True).start()
    feed.df = (
        spark.readStream.format(FEED_FORMAT)
        .schema(schema)
        .option("address", feed.address)
        .option("token", feed._token)
        .option("maxRows", str(per_batch))
        .load()
    )
    feed._loop = loop
    feed._ended = loop.create_future()
    publisher.subscribe(feed)
    return feed
