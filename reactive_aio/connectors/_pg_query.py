"""``from_query``: the rows of a query, read through a server-side cursor by demand.

Backpressure: full; outstanding demand becomes ``cursor.fetch(min(demand, fetch_size))`` (see
`PullSubscription`), so the result is never held whole: a subscriber that asks for ten rows of a
billion-row query costs one fetch of ten.
Errors: a failing query or a lost connection ends the stream with ``on_error`` after the rows
already fetched (a cursor cannot be resumed on another connection; rerun the query, keyed, to
continue); connecting is retried with *backoff*.
Cancel: the fetch task stops, the transaction is rolled back and the connection closed, which
closes the cursor on the server.
"""

from __future__ import annotations

__all__ = ("QueryPublisher", "from_query")

import asyncio
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar, final

import attrs

from .._core import Publisher, Subscriber, require_not_none
from ._backoff import DEFAULT_BACKOFF, Backoff, retrying
from ._pull import PullSubscription

T = TypeVar("T")

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
class QueryPublisher(Publisher[T], Generic[T]):
    """What `from_query` returns: cold, each subscriber runs the query afresh."""

    dsn: str
    sql: str
    args: tuple[Any, ...] = ()
    fetch_size: int = 1_000
    record: Callable[[Any], T] | None = None
    backoff: Backoff = DEFAULT_BACKOFF

    def __attrs_post_init__(self) -> None:
        if self.fetch_size <= 0:
            raise ValueError(f"fetch_size must be > 0, got {self.fetch_size}")

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        _QuerySubscription[T](subscriber, max_batch=self.fetch_size, query=self).begin()


@final
@attrs.define(eq=False)
class _QuerySubscription(PullSubscription[T], Generic[T]):
    _query: QueryPublisher[T] = attrs.field(kw_only=True, alias="query")
    _connection: Any = attrs.field(default=None, init=False)
    _cursor: Any = attrs.field(default=None, init=False)
    _exhausted: bool = attrs.field(default=False, init=False)

    async def _open(self) -> None:
        query = self._query
        self._connection = connection = await connect(query.dsn, query.backoff)
        # A cursor lives in a transaction; a read-only snapshot keeps the result consistent.
        await connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        self._cursor = await connection.cursor(query.sql, *query.args)

    async def _fetch(self, n: int) -> Sequence[T] | None:
        if self._exhausted:
            return None
        rows = await self._cursor.fetch(n)
        if len(rows) < n:
            self._exhausted = True  # the next fetch would return nothing: skip its round trip
            if not rows:
                return None
        record = self._query.record
        return rows if record is None else list(map(record, rows))

    async def _close(self) -> None:
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
