"""``from_query``: the rows of a query, read through a server-side cursor by demand.

Backpressure: full; demand not covered by the rows in hand becomes one
``cursor.fetch(min(demand, fetch_size))``, so the result is never held whole: a subscriber that
asks for ten rows of a billion-row query costs one fetch of ten. An `AsyncSource` reading
batches (`AsyncSource.async_batches`): the fetched list is handed over as it is, the next fetch
goes out while its rows are emitted, maps and filters after it run inside the fetching task,
and a fold or an ``async for`` reads the cursor in its own task, ``fetch_size`` rows a fetch.
Errors: a failing query or a lost connection ends the stream with ``on_error`` after the rows
already fetched (a cursor cannot be resumed on another connection; rerun the query, keyed, to
continue); connecting is retried with *backoff*.
Cancel: the fetch task stops, the transaction is rolled back and the connection closed, which
closes the cursor on the server.
"""

from __future__ import annotations

__all__ = ("QueryPublisher", "from_query")

import asyncio
import functools
import operator
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, Generic, TypeVar, final

import attrs

from .._core import AsyncSource, LoopBound, NullSignalError, short_repr
from ._backoff import DEFAULT_BACKOFF, Backoff, retrying

T = TypeVar("T")

_is_none = functools.partial(operator.is_, None)

_CLOSE_TIMEOUT = 5.0


async def connect(dsn: str, backoff: Backoff) -> Any:
    """An asyncpg connection to *dsn*, retried with *backoff*."""
    import asyncpg

    return await retrying(lambda: asyncpg.connect(dsn), backoff, _redact(dsn))


async def close_connection(connection: Any) -> None:
    """Close politely, or terminate a connection that does not close in time."""
    if connection is None or connection.is_closed():
        return
    try:
        await asyncio.wait_for(connection.close(), _CLOSE_TIMEOUT)
    except Exception:  # a broken connection cannot close politely
        connection.terminate()


def _redact(dsn: str) -> str:
    """*dsn* without its password, for error messages."""
    head, at, tail = dsn.rpartition("@")
    if not at:
        return dsn
    scheme, sep, credentials = head.partition("://")
    user = credentials.split(":", 1)[0]
    return f"{scheme}{sep}{user}@{tail}"


@final
@attrs.frozen
class QueryPublisher(AsyncSource[T], LoopBound, Generic[T]):
    """What `from_query` returns: cold, each subscriber (fold, ``async for``) runs the query
    afresh."""

    dsn: str
    sql: str
    args: tuple[Any, ...] = ()
    fetch_size: int = 1_000
    record: Callable[[Any], T] | None = None
    backoff: Backoff = DEFAULT_BACKOFF

    def __attrs_post_init__(self) -> None:
        if self.fetch_size <= 0:
            raise ValueError(f"fetch_size must be > 0, got {self.fetch_size}")

    def async_batches(self, want: Callable[[], int]) -> AsyncIterator[Sequence[T]]:
        return _Fetches(self, want)


@final
@attrs.define(eq=False)
class _Fetches(Generic[T]):
    """The query's rows, a fetch at a time: connected and opened at the first, each as large
    as the reader wants (at most ``fetch_size``); closing rolls back and disconnects."""

    _query: QueryPublisher[T]
    _want: Callable[[], int]
    _connection: Any = attrs.field(default=None, init=False)
    _cursor: Any = attrs.field(default=None, init=False)
    _exhausted: bool = attrs.field(default=False, init=False)
    closed: bool = attrs.field(default=False, init=False)
    """True once `aclose` ran (after cancel, completion or failure)."""

    def __aiter__(self) -> _Fetches[T]:
        return self

    async def __anext__(self) -> Sequence[T]:
        if self._exhausted:
            raise StopAsyncIteration
        query = self._query
        cursor = self._cursor
        if cursor is None:
            cursor = await self._open()
        want = self._want()
        n = want if want < query.fetch_size else query.fetch_size
        if n <= 0:
            return []  # (a subscriber's first read: connected and opened, no demand yet)
        rows: list[Any] = await cursor.fetch(n)
        if len(rows) < n:
            self._exhausted = True  # the next fetch would return nothing: skip its round trip
            if not rows:
                raise StopAsyncIteration
        record = query.record
        if record is None:
            return rows  # (a record is never None)
        items = list(map(record, rows))
        if any(map(_is_none, items)):
            at = next(i for i, item in enumerate(items) if item is None)
            raise NullSignalError(
                f"rule 2.13: from_query's record returned None for {short_repr(rows[at])}"
            )
        return items

    async def _open(self) -> Any:
        query = self._query
        self._connection = connection = await connect(query.dsn, query.backoff)
        # A cursor lives in a transaction; a read-only snapshot keeps the result consistent.
        await connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        self._cursor = cursor = await connection.cursor(query.sql, *query.args)
        return cursor

    async def aclose(self) -> None:
        self._exhausted = self.closed = True
        connection, self._connection, self._cursor = self._connection, None, None
        await close_connection(connection)


def from_query(
    dsn: str,
    sql: str,
    *args: Any,
    fetch_size: int = 1_000,
    record: Callable[[Any], T] | None = None,
    backoff: Backoff = DEFAULT_BACKOFF,
) -> QueryPublisher[T]:
    """A publisher of the rows of *sql* (with ``$1``… bound to *args*), fetched by demand.

    Args:
        dsn: ``postgresql://user@host:port/database``.
        sql: One query; it runs in a read-only repeatable-read transaction.
        fetch_size: The largest fetch from the cursor.
        record: Turns an ``asyncpg.Record`` into the emitted item (default: the record).
        backoff: Retries of the connection attempt.
    """
    return QueryPublisher(dsn, sql, args, fetch_size, record, backoff)
