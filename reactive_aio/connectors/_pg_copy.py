"""``to_postgres``: a subscriber that lands a stream in a table with COPY, one transaction per batch.

Backpressure: bounded; the sink asks for a batch of items (the first before it connects),
gathers them until the batch is full or *max_latency* seconds after its first item, and asks
for the next batch as it starts writing this one, so the next one gathers while the COPY runs:
it never holds more than two batches (the one being written and the one gathering). A batch is
*batch_size* items, or fewer when its rows would take more than about *batch_bytes*: the first
1,000 items are measured as they arrive, and every batch's rows size the next. The first batch
is what gathered while the connection was made, once that is at least a third of a batch, and
each one holds at most three times the items of the one before (`_GROWTH`), so that the
server has a batch to write while the next, larger one gathers.
Exactly once: every batch is numbered, and the batch's number, the source positions its items
carry (``positions(item)``) and its rows are committed in the same transaction; a position that
is already committed is never written again (the positions table's key enforces it even
against a concurrent writer). An item whose positions are all committed is skipped, and every
batch's positions, skipped ones included, are reported to *on_commit* after the commit, in
batch order, so a source that acknowledges after landing (`JetStreamSource`) can acknowledge
what an earlier run landed.
Errors: a lost connection is re-established with *backoff* and the batch retried (the rolled
back transaction left nothing behind; a commit whose answer was lost is found in the positions
table). A batch the server rejects fails the sink with `PostgresWriteError`, which names every
item that did not land (the batch and what was buffered behind it); upstream is cancelled. So
does a batch the client rejects before the server sees it (an item that is a mapping without
one of the columns, a value asyncpg cannot encode for its column,
a row with more or fewer values than there are columns, *rows* raising): the error names the
batch and the first item at fault (its index in the batch
and a short repr), its ``__cause__`` is the original error, and the batches before stay
committed. An upstream error first lands what is buffered, then fails `PostgresSink.wait`.
"""

from __future__ import annotations

__all__ = (
    "COMMITS_TABLE",
    "POSITIONS_TABLE",
    "PostgresSink",
    "PostgresWriteError",
    "committed_positions",
    "to_postgres",
)

import asyncio
import functools
import inspect
import json
import operator
import reprlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Generic, TypeVar, final

import attrs

from .._commit import CommitListener
from .._core import ItemsSubscriber, StageScan, require_not_none, stage_state
from ._backoff import DEFAULT_BACKOFF, Backoff
from ._pg_query import close_connection, connect
from ._task_sink import TaskSink

T = TypeVar("T")

BATCH_SIZE = 100_000
"""`to_postgres`'s default items per batch: bulk loads land in few, large COPYs."""
BATCH_BYTES = 16 * 1024 * 1024
"""`to_postgres`'s default bound on a batch's rows, in about the bytes COPY sends."""
_FIRST_BATCH = 1_000
"""The first items of a sink, whose rows are measured to size its batches."""
_GROWTH = 3
"""A batch holds at most this many times the items of the one before it, and the first is
written, once the connection is made, with what gathered meanwhile when that is at least a
third (one over this) of a batch: while a batch is in COPY the next one gathers, so the
server is kept busy from the first batch on. A source whose items are at hand fills a whole
batch while the connection is made (one COPY fewer than a ramp from a third); one that emits
item by item, two to three times faster than the server writes (bench_postgres, 2 loaded
cores), starts smaller rather than have the server wait for a full batch."""

COMMITS_TABLE = "reactive_aio_commits"
"""One row per committed batch: ``(sink, batch_id, items, rows, committed_at)``."""
POSITIONS_TABLE = "reactive_aio_positions"
"""One row per committed source position: ``(sink, position, batch_id)``; the key is
``(sink, position)``. Positions are stored as JSON text."""

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS {COMMITS_TABLE} (
    sink text NOT NULL,
    batch_id bigint NOT NULL,
    items integer NOT NULL,
    rows integer NOT NULL,
    committed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (sink, batch_id)
);
CREATE TABLE IF NOT EXISTS {POSITIONS_TABLE} (
    sink text NOT NULL,
    position text NOT NULL,
    batch_id bigint NOT NULL,
    PRIMARY KEY (sink, position)
);
"""


class PostgresWriteError(RuntimeError):
    """A batch was rejected, by the server or by the client before sending; `items` holds every
    item that did not land, in order."""

    def __init__(self, message: str, items: Sequence[Any]) -> None:
        super().__init__(message)
        self.items = list(items)


class _Unsendable(Exception):
    """The client could not build or encode the rows of the items *sent* (*error*).

    An exception, not a return, because it leaves the batch's transaction (which rolls back).
    """

    def __init__(self, error: Exception, sent: list[Any]) -> None:
        super().__init__(error)
        self.error = error
        self.sent = sent


class _RolledBack(Exception):
    """Leaves a transaction that must not commit."""


_Shape = tuple[set[type], set[int]]
"""The types and the lengths of a batch's items (of more items, when the batch is cut from
them), measured as they arrived."""


def _literal(text: str) -> str:
    """*text* as an SQL string literal, whatever ``standard_conforming_strings`` says."""
    return "E'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


def _key(position: Any) -> str:
    return str(position) if type(position) is int else json.dumps(position, separators=(",", ":"))


def _decode(key: str) -> Any:
    value = json.loads(key)
    return _freeze(value)


def _freeze(value: Any) -> Any:
    return tuple(_freeze(v) for v in value) if isinstance(value, list) else value


def _row_bytes(row: Sequence[Any]) -> int:
    """About what *row* takes in COPY's binary format: its texts and bytes, 12 for any other
    value (a number's 8 and the length word every value has)."""
    size = 0
    for value in row:
        kind = type(value)
        size += len(value) + 4 if kind is str or kind is bytes else 12
    return size


def _picker(columns: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """What takes a mapping's values for *columns*, as a tuple."""
    if len(columns) == 1:
        column = columns[0]
        return lambda mapping: (mapping[column],)
    return operator.itemgetter(*columns)


@functools.cache
def _retryable() -> tuple[type[BaseException], ...]:
    import asyncpg

    return (
        OSError,
        ConnectionError,
        TimeoutError,
        asyncpg.PostgresConnectionError,
        asyncpg.ConnectionDoesNotExistError,
        asyncpg.InterfaceError,
        asyncpg.InternalClientError,  # the driver's state after a connection broke mid-call
        asyncpg.CannotConnectNowError,
        asyncpg.AdminShutdownError,
    )


async def _ensure_schema(connection: Any) -> None:
    # Two sinks starting at once may both try to create the tables; the loser's error is
    # harmless, the tables exist either way.
    import asyncpg

    try:
        await connection.execute(_SCHEMA)
    except (asyncpg.UniqueViolationError, asyncpg.DuplicateTableError):
        pass


async def committed_positions(
    dsn: str, sink: str, *, backoff: Backoff = DEFAULT_BACKOFF
) -> set[Any]:
    """The source positions sink *sink* has committed in the database at *dsn*.

    What a source that replays from positions (rather than from a broker's acknowledgements)
    reads to resume; tuples come back as tuples.
    """
    connection = await connect(dsn, backoff)
    try:
        await _ensure_schema(connection)
        rows = await connection.fetch(
            f"SELECT position FROM {POSITIONS_TABLE} WHERE sink = $1", sink
        )
    finally:
        await close_connection(connection)
    return {_decode(row[0]) for row in rows}


@final
@attrs.define(eq=False)
class PostgresSink(TaskSink[T], ItemsSubscriber[T], Generic[T]):
    """What `to_postgres` returns; await it (or `wait`) for the number of rows written.

    `wait` raises `PostgresWriteError` when a batch was rejected (upstream was cancelled),
    `ConnectionLostError` when the database stayed unreachable through the backoff, and
    upstream's error after what was buffered has landed.
    """

    dsn: str
    table: str
    columns: tuple[str, ...]
    rows: Callable[[T], Iterable[Sequence[Any]]] | None = None
    batch_size: int = BATCH_SIZE
    batch_bytes: int = BATCH_BYTES
    max_latency: float = 1.0
    positions: Callable[[T], Iterable[Any]] | None = None
    on_commit: CommitListener[Any] | None = None
    name: str = ""
    schema: str | None = None
    backoff: Backoff = DEFAULT_BACKOFF
    rows_written: int = attrs.field(default=0, init=False)
    batches: int = attrs.field(default=0, init=False)
    """Batches committed by this sink."""
    skipped: int = attrs.field(default=0, init=False)
    """Items not written because their positions were committed before."""
    _buffer: list[T] = attrs.field(factory=list, init=False)
    _timer: asyncio.TimerHandle | None = attrs.field(default=None, init=False)
    _due: bool = attrs.field(default=False, init=False)
    _connection: Any = attrs.field(default=None, init=False)
    _committed: set[str] = attrs.field(factory=set, init=False)
    _next_batch: int = attrs.field(default=1, init=False)
    _limit: int = attrs.field(default=0, init=False)
    """Items in the next batch: *batch_size*, or fewer when they would exceed *batch_bytes*."""
    _ready_at: int = attrs.field(default=0, init=False)
    """Items in hand that the writer takes as a batch: the limit, the first time a fraction
    of it (`_GROWTH`)."""
    _asked: int = attrs.field(default=0, init=False)
    _taken: int = attrs.field(default=0, init=False)
    """Items requested and items taken into batches so far: the difference is in hand or due."""
    _measured: bool = attrs.field(default=False, init=False)
    """The first items' rows have sized the batches."""
    _kinds: set[type] = attrs.field(factory=set, init=False)
    _lengths: set[int] = attrs.field(factory=set, init=False)
    _scanned: int = attrs.field(default=0, init=False)
    """The types and lengths of the first `_scanned` buffered items: all of them when it is
    the buffer's length (-1: unknown until the buffer is taken whole)."""
    _pick: Callable[[Any], tuple[Any, ...]] = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        if self.batch_size <= 0:
            raise ValueError(f"batch_size must be > 0, got {self.batch_size}")
        if self.batch_bytes <= 0:
            raise ValueError(f"batch_bytes must be > 0, got {self.batch_bytes}")
        if not self.columns:
            raise ValueError("to_postgres needs the target's columns")
        self._limit = self._ready_at = min(self.batch_size, _FIRST_BATCH)
        self._pick = _picker(self.columns)
        if not self.name:
            self.name = self.table if self.schema is None else f"{self.schema}.{self.table}"

    def cancel(self) -> None:
        """Stop: cancel upstream; what is buffered does not land, a batch being written does."""
        self._fail(asyncio.CancelledError())

    def scan_stage(self) -> StageScan:
        """For `reactive_aio.snapshot`: the items gathering for the next batch, and upstream
        (pulled when its items are at hand)."""
        return StageScan(
            operator="to_postgres",
            state=stage_state(ended=self._stopped, error=self._upstream_error),
            buffered=len(self._buffer),
            upstream=self._upstream,
            loop=self._loop,
        )

    def on_next(self, item: T) -> None:
        if item is None:
            require_not_none(item, "2.13", "on_next's item")
        if self._stopped or self._upstream_done:  # (`_accepting` inlined: once per item)
            return
        buffer = self._buffer
        buffer.append(item)
        size = len(buffer)
        if size == 1 and self._loop is not None:
            self._timer = self._loop.call_later(self.max_latency, self._latency_due)
        if size >= self._ready_at:
            self._filled()

    def on_items(self, items: list[T]) -> None:
        """What a source at hand sends (`ItemsSubscriber`): a request's items in one list,
        taken into the batch at once. Their types and lengths are noted as they arrive, while
        the previous batch is written, so that making this batch's rows takes no pass over it
        between the two COPYs (the server would wait)."""
        if self._stopped or self._upstream_done:
            return
        buffer = self._buffer
        if not buffer and self._loop is not None:
            self._timer = self._loop.call_later(self.max_latency, self._latency_due)
        if self._scanned == len(buffer) and self.rows is None:
            rows: list[Any] = items  # (without *rows*, an item is a row, or fails as one)
            try:
                self._lengths.update(map(len, rows))
            except Exception:  # not a row: the batch's own pass names it
                self._scanned = -1
            else:
                self._kinds.update(map(type, items))
                self._scanned += len(items)
        buffer.extend(items)
        if len(buffer) >= self._ready_at:
            self._filled()

    # -- the writer ---------------------------------------------------------------------

    def _latency_due(self) -> None:
        self._timer = None
        self._due = True
        self._signal()

    def _stopping(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    async def _run(self) -> None:
        assert self._loop is not None
        try:
            self._top_up()  # the first batch gathers while the connection is made
            await self._reconnect()
            while not self._stopped:
                if self._batch_ready():
                    batch, shape = self._take(self._limit)
                    self._taken += len(batch)
                    self._due = False
                    self._stopping()
                    if self._buffer:
                        self._timer = self._loop.call_later(self.max_latency, self._latency_due)
                    self._top_up()  # the next batch gathers while this one is written
                    await self._land(batch, shape)
                    continue
                if self._upstream_done:
                    break
                await self._idle()
        except Exception as exc:
            self._fail(exc)
        finally:
            await close_connection(self._connection)
            self._connection = None
        self._finish(self.rows_written)

    def _batch_ready(self) -> bool:
        """The writer has a batch to take: a full one, or what is due or left at the end."""
        buffer = self._buffer
        return (
            bool(buffer)
            and not self._stopped
            and (len(buffer) >= self._ready_at or self._due or self._upstream_done)
        )

    def _take(self, limit: int) -> tuple[list[T], _Shape | None]:
        """The next batch, at most *limit* buffered items, and its shape when it is known."""
        buffer = self._buffer
        shape = (self._kinds, self._lengths) if self._scanned == len(buffer) else None
        if len(buffer) <= limit:  # (as a rule: a batch is taken whole, no copy)
            self._buffer = []
            self._kinds, self._lengths, self._scanned = set(), set(), 0
            return buffer, shape
        batch = buffer[:limit]
        del buffer[:limit]
        if shape is None:
            self._scanned = -1
        else:  # the rest's shape is within the whole's, which goes on gathering
            shape = (set(self._kinds), set(self._lengths))
            self._scanned = len(buffer)
        return batch, shape

    def _top_up(self) -> None:
        """Request what makes the items in hand and due one batch."""
        want = self._limit - (self._asked - self._taken)
        if want > 0:
            self._asked += want
            self._request(want)

    async def _reconnect(self) -> None:
        """(Re)connect, then read what is committed: a retried batch skips what landed (with
        *positions*; without, only the batches are numbered on)."""
        await close_connection(self._connection)
        self._connection = None
        connection = await connect(self.dsn, self.backoff)
        self._connection = connection
        await _ensure_schema(connection)
        if self.positions is not None:
            rows = await connection.fetch(
                f"SELECT position FROM {POSITIONS_TABLE} WHERE sink = $1", self.name
            )
            self._committed = {row[0] for row in rows}
        last = await connection.fetchval(
            f"SELECT max(batch_id) FROM {COMMITS_TABLE} WHERE sink = $1", self.name
        )
        self._next_batch = 1 if last is None else int(last) + 1

    async def _land(self, batch: list[T], shape: _Shape | None) -> None:
        import asyncpg

        retryable = _retryable()
        attempt = 0
        while True:
            try:
                try:
                    await self._commit(batch, shape)
                except _Unsendable as unsendable:  # out here: a connection lost meanwhile retries
                    raise await self._rejected_here(batch, unsendable) from unsendable.error
                return
            except asyncpg.UniqueViolationError:
                pass  # another writer, or our own commit whose answer was lost: re-read
            except retryable as exc:
                attempt += 1
                if attempt > self.backoff.attempts:
                    raise self._not_landed(batch, exc) from exc
                await asyncio.sleep(self.backoff.delay(attempt))
            except asyncpg.PostgresError as exc:
                raise self._not_landed(batch, exc) from exc
            if self._stopped:
                return
            await self._reconnect()

    def _not_landed(self, batch: list[T], exc: BaseException, why: str = "") -> PostgresWriteError:
        lost = [*batch, *self._buffer]
        return PostgresWriteError(
            f"{self.name}: batch {self._next_batch} was not written{why} "
            f"({type(exc).__name__}: {exc}); {len(lost)} items did not land",
            lost,
        )

    async def _rejected_here(self, batch: list[T], unsendable: _Unsendable) -> PostgresWriteError:
        """The error for a batch the client could not send, naming the item it failed on."""
        index = await self._first_unsendable(unsendable.sent)
        if index is None:
            why = ": one of its items cannot be sent as rows (a second try did not find which)"
        else:
            item = unsendable.sent[index]
            # the items sent are the batch less the skipped ones: find the same object
            at = next(i for i, candidate in enumerate(batch) if candidate is item)
            why = f": its item {at} {reprlib.repr(item)} cannot be sent as rows"
        # made after the last await, so that it names what was buffered meanwhile too
        return self._not_landed(batch, unsendable.error, why)

    async def _first_unsendable(self, items: list[T]) -> int | None:
        """The index of the first of *items* whose rows cannot be built or encoded, or None.

        Only on the failure path: the batch's own COPY is handed a plain list, with no
        bookkeeping per row. Here the items are copied again one at a time through a generator
        that notes which one it is on, in a transaction that is always rolled back; the item
        it is on when the COPY fails is the culprit. A lost connection is raised, so that the
        batch is retried as a whole.
        """
        import asyncpg

        reached = -1

        def records() -> Iterator[Sequence[Any]]:
            nonlocal reached
            for item in items:
                reached += 1
                yield from self._rows_of([item])

        connection = self._connection
        try:
            async with connection.transaction():
                await connection.copy_records_to_table(
                    self.table, records=records(), columns=self.columns, schema_name=self.schema
                )
                raise _RolledBack
        except _retryable():
            raise
        except (_RolledBack, asyncpg.PostgresError):
            return None  # the rows went through this time
        except Exception:
            return reached if reached >= 0 else None

    def _unlanded(
        self, batch: list[T], position_of: Callable[[T], Iterable[Any]]
    ) -> tuple[list[T], list[str], list[Any], int]:
        """The items of *batch* not landed before, their position keys, every item's positions
        (to report), and how many items were skipped."""
        committed = self._committed
        reported: list[Any] = []
        fresh_keys: list[str] = []
        fresh: list[T] = []
        batch_keys: set[str] = set()
        skipped = 0
        for item in batch:
            item_positions = list(position_of(item))
            reported.extend(item_positions)
            keys = [_key(p) for p in item_positions]
            # landed before, or earlier in this batch (a message redelivered while its first
            # delivery waited for this commit)
            new = [k for k in keys if k not in committed and k not in batch_keys]
            if keys and not new:
                skipped += 1
                continue
            if len(new) != len(keys):
                raise PostgresWriteError(
                    f"{self.name}: an item covers positions of which some were committed "
                    f"before and some not ({item_positions!r}); writing it would duplicate "
                    "rows: group items the same way on every run",
                    [item],
                )
            fresh.append(item)
            fresh_keys.extend(new)
            batch_keys.update(new)
        return fresh, fresh_keys, reported, skipped

    async def _commit(self, batch: list[T], shape: _Shape | None) -> None:
        connection = self._connection
        if connection is None or connection.is_closed():
            raise ConnectionError("no connection")
        batch_id = self._next_batch
        position_of = self.positions
        fresh: list[T]
        fresh_keys: list[str]
        reported: list[Any]
        if position_of is None:  # (no bookkeeping per item: the batch is what is sent)
            fresh, fresh_keys, reported, skipped = batch, [], [], 0
        else:
            fresh, fresh_keys, reported, skipped = self._unlanded(batch, position_of)
        try:
            try:
                rows = self._rows_of(fresh, shape)
            except Exception as exc:  # a mapping without a column, a row too long, *rows* failing
                raise _Unsendable(exc, fresh) from exc
            if rows:
                self._size_next(rows, len(fresh), _GROWTH * len(batch))
            if not connection.is_in_transaction():  # (unless the previous batch's commit opened it)
                await connection.execute("BEGIN")
            if rows:
                await self._copy_rows(connection, rows, fresh)
            if fresh_keys:
                name = self.name
                await connection.copy_records_to_table(
                    POSITIONS_TABLE,
                    records=[(name, key, batch_id) for key in fresh_keys],
                    columns=("sink", "position", "batch_id"),
                )
            # One round trip numbers the batch (a number taken already fails here, and the
            # batch rolls back), commits it and, when the next batch is in hand, opens that
            # one's transaction: a batch costs its COPYs' round trips and one more, which
            # carries the commit's fsync (an autocommitted COPY's own round trip carries it).
            # (The time is the statement's: the transaction may have begun with the last commit.)
            await connection.execute(
                f"INSERT INTO {COMMITS_TABLE} (sink, batch_id, items, rows, committed_at) "
                f"VALUES ({_literal(self.name)}, {batch_id}, {len(batch)}, {len(rows)}, "
                f"clock_timestamp()); COMMIT{'; BEGIN' if self._batch_ready() else ''}"
            )
        except BaseException:
            if not connection.is_closed() and connection.is_in_transaction():
                await connection.execute("ROLLBACK")
            raise
        self._committed.update(fresh_keys)
        self._next_batch = batch_id + 1
        self.batches += 1
        self.rows_written += len(rows)
        self.skipped += skipped
        listener = self.on_commit
        if listener is not None:
            result = listener.committed(batch_id, reported)
            if inspect.isawaitable(result):
                await result

    async def _copy_rows(self, connection: Any, rows: list[Sequence[Any]], items: list[T]) -> None:
        """COPY *rows* (of *items*); `_Unsendable` when asyncpg cannot encode one of them."""
        import asyncpg

        try:
            await connection.copy_records_to_table(
                self.table, records=rows, columns=self.columns, schema_name=self.schema
            )
        except _retryable():
            raise  # a lost connection: the batch is retried
        except asyncpg.PostgresError:
            raise  # the server's reject, which names the row itself
        except Exception as exc:  # from the encoding: a short row, a value of the wrong type
            raise _Unsendable(exc, items) from exc

    def _filled(self) -> None:
        """A batch is in hand: wake the writer.

        The first time, the first items' rows size the batch they start first, which keeps
        gathering (a batch of their own would cost a commit, and leave the next one nothing
        to overlap with) until the connection is made, and at least to a fraction of the
        limit. When their rows cannot be made, the limit stays: the batch is cut there, and
        landing it names the item at fault."""
        buffer = self._buffer
        if not self._measured:
            self._measured = True
            try:
                rows = self._rows_of(buffer)
            except Exception:
                rows = []
            if rows:
                self._size_next(rows, len(buffer), self.batch_size)
                self._ready_at = max(1, self._limit // _GROWTH)
        if len(buffer) >= self._ready_at:
            self._signal()

    def _size_next(self, rows: list[Sequence[Any]], items: int, most: int) -> None:
        """Size the next batch from a sample of this one's rows, at most *most* items, and
        ask for what it lacks: before this batch is written, so that all of the next one
        gathers meanwhile."""
        sample = (rows[0], rows[len(rows) // 2], rows[-1])
        per_item = sum(map(_row_bytes, sample)) * len(rows) // (len(sample) * items)
        bound = min(self.batch_size, most, self.batch_bytes // max(1, per_item))
        self._limit = self._ready_at = max(1, bound)
        self._top_up()

    def _rows_of(self, items: list[Any], shape: _Shape | None = None) -> list[Sequence[Any]]:
        """The rows of *items*; a `ValueError` for a row that does not fill the columns exactly
        (asyncpg would send a longer one cut to the columns; a short row whose lack a long one
        makes up for fails in asyncpg instead, with an IndexError).

        The shape is decided once per batch, from the types present (a set built in C), not
        per item: a batch of sequences is its own rows, a batch of mappings is picked by column.
        A *shape* measured as the items arrived (of these items or more) spares the passes.
        """
        convert = self.rows
        width = len(self.columns)
        if convert is not None:
            rows = [row for item in items for row in convert(item)]
        else:
            kinds = set(map(type, items)) if shape is None else shape[0]
            mappings = {kind for kind in kinds if issubclass(kind, Mapping)}
            if not mappings:
                if shape is not None and shape[1] == {width}:
                    return items  # every one a sequence of the columns' width
                rows = items
            elif len(mappings) == len(kinds):
                return list(map(self._pick, items))  # (a row per column, by construction)
            else:
                pick = self._pick
                rows = [pick(item) if type(item) in mappings else item for item in items]
        # A sum, not a set of the lengths (no hashing per row): a short row beside a long one
        # adds up, but asyncpg then fails on the short one, and the batch is rolled back.
        if sum(map(len, rows)) != width * len(rows):
            row = next(row for row in rows if len(row) != width)
            raise ValueError(
                f"a row of {len(row)} values for the {width} columns {', '.join(self.columns)}: "
                f"{reprlib.repr(row)}"
            )
        return rows


def to_postgres(
    dsn: str,
    table: str,
    columns: Sequence[str],
    *,
    rows: Callable[[T], Iterable[Sequence[Any]]] | None = None,
    batch_size: int = BATCH_SIZE,
    batch_bytes: int = BATCH_BYTES,
    max_latency: float = 1.0,
    positions: Callable[[T], Iterable[Any]] | None = None,
    on_commit: CommitListener[Any] | None = None,
    name: str | None = None,
    schema: str | None = None,
    backoff: Backoff = DEFAULT_BACKOFF,
) -> PostgresSink[T]:
    """A subscriber that COPYs what it receives into *table* (*columns*), a batch per transaction.

    Args:
        dsn: ``postgresql://user@host:port/database``.
        table: The target table (it must exist).
        columns: The columns the rows fill, in order.
        rows: The rows one item becomes (default: the item is one row, a sequence or a
            mapping keyed by column).
        batch_size: The most items per batch (a batch is requested at once).
        batch_bytes: The most a batch's rows take, about, in bytes sent (texts and bytes by
            their length, other values 12 each): a batch of wide rows holds fewer items.
        max_latency: Seconds after its first item a partial batch is written.
        positions: The source positions an item covers (for a JetStream message
            ``lambda m: [m.sequence]``); enables exactly-once landing and *on_commit*.
        on_commit: Told each batch's number and positions after it committed.
        name: The sink's name in the commit tables (default: the table's name).
        schema: The table's schema.
        backoff: Reconnects and retries of a batch whose connection was lost.
    """
    return PostgresSink(
        dsn,
        table,
        tuple(columns),
        rows,
        batch_size,
        batch_bytes,
        max_latency,
        positions,
        on_commit,
        name or "",
        schema,
        backoff,
    )
