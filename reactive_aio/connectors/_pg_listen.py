"""``listen``: PostgreSQL LISTEN/NOTIFY as a hot publisher.

Backpressure: none at the source (a notification is sent whether or not anyone asked), so
*overflow* decides what happens to notifications that arrive without demand: buffer up to a
size, then drop the oldest or the newest, or fail (`Overflow`, as for ``Flux.create``).
Errors: a payload *parse* rejects is inserted into the *dead_letter* table (channel, payload,
reason) and the stream flows on; without a dead letter the stream fails naming the payload.
A lost connection is re-established with *backoff* and the channel listened to again;
notifications sent while it was down are not seen (NOTIFY is not durable: use a JetStream
stream or a table for what must not be missed). After the attempts the stream fails with
`ConnectionLostError`.
Cancel: the listener is removed and the connection closed. Hot: each subscriber sees the
notifications sent while it is subscribed, over its own connection.
"""

from __future__ import annotations

__all__ = ("DEAD_LETTER_COLUMNS", "listen")

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar, cast

from .. import Flux, FluxSink, Overflow
from ._backoff import DEFAULT_BACKOFF, Backoff
from ._pg_query import close_connection, connect

T = TypeVar("T")

DEAD_LETTER_COLUMNS = ("channel", "payload", "reason")

DEFAULT_OVERFLOW = Overflow.BUFFER(1_024, then="error")
"""`listen`'s default: buffer 1,024 notifications nobody asked for yet, then fail."""
"""The columns `listen` fills in its dead-letter table."""


class _Listener:
    """One subscriber's connection, listener and reconnect loop."""

    def __init__(
        self,
        sink: FluxSink[Any],
        dsn: str,
        channel: str,
        parse: Callable[[str], Any] | None,
        dead_letter: str | None,
        backoff: Backoff,
    ) -> None:
        self.sink = sink
        self.dsn = dsn
        self.channel = channel
        self.parse = parse
        self.dead_letter = dead_letter
        self.backoff = backoff
        self.connection: Any = None
        self.lost: asyncio.Event = asyncio.Event()
        self.pending: set[asyncio.Task[None]] = set()
        self.task = asyncio.get_running_loop().create_task(self.run())
        sink.on_cancel(self.task.cancel)

    async def run(self) -> None:
        try:
            while not self.sink.cancelled:
                try:
                    await self.open()
                except Exception as exc:  # ConnectionLostError after the backoff, or LISTEN failed
                    self.sink.error(exc)
                    return
                await self.lost.wait()
                self.lost.clear()
        except asyncio.CancelledError:
            pass
        finally:
            for task in self.pending:
                task.cancel()
            await close_connection(self.connection)

    async def open(self) -> None:
        await close_connection(self.connection)
        self.connection = connection = await connect(self.dsn, self.backoff)
        connection.add_termination_listener(lambda _connection: self.lost.set())
        await connection.add_listener(self.channel, self.notified)

    def notified(self, connection: Any, pid: int, channel: str, payload: str) -> None:
        parse = self.parse
        if parse is None:
            self.sink.next(payload)
            return
        try:
            value = parse(payload)
        except Exception as exc:
            self.reject(payload, f"{type(exc).__name__}: {exc}", exc)
            return
        self.sink.next(value)

    def reject(self, payload: str, reason: str, error: Exception) -> None:
        if self.dead_letter is None:
            self.sink.error(ValueError(f"channel {self.channel}: payload {payload!r}: {reason}"))
            return
        task = asyncio.get_running_loop().create_task(self.store(payload, reason))
        self.pending.add(task)
        task.add_done_callback(self.pending.discard)

    async def store(self, payload: str, reason: str) -> None:
        assert self.dead_letter is not None
        columns = ", ".join(DEAD_LETTER_COLUMNS)
        try:
            await self.connection.execute(
                f"INSERT INTO {self.dead_letter} ({columns}) VALUES ($1, $2, $3)",
                self.channel,
                payload,
                reason,
            )
        except Exception as exc:
            self.sink.error(exc)


def listen(
    dsn: str,
    channel: str,
    *,
    overflow: Overflow = DEFAULT_OVERFLOW,
    parse: Callable[[str], T] | None = None,
    dead_letter: str | None = None,
    backoff: Backoff = DEFAULT_BACKOFF,
) -> Flux[T]:
    """A hot `Flux` of the notifications on *channel*; see the module docs.

    Args:
        dsn: ``postgresql://user@host:port/database``.
        channel: The channel to LISTEN on.
        overflow: What to do with notifications that arrive without demand.
        parse: Turns a payload into the emitted item (default: the payload string).
        dead_letter: A table with the columns `DEAD_LETTER_COLUMNS` for payloads *parse*
            rejects.
        backoff: Reconnect policy.
    """

    def emitter(sink: FluxSink[T]) -> None:
        _Listener(sink, dsn, channel, parse, dead_letter, backoff)

    return cast(Flux[T], Flux.create(emitter, overflow=overflow))
