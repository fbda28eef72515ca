"""``to_jetstream``: a subscriber that publishes to JetStream and waits for each publish's ack.

Backpressure: bounded; demand is the number of free ack slots: the sink asks for *max_in_flight*
items, and asks for more as the server acknowledges publishes (a quarter of the window at a
time), so never more than *max_in_flight* publishes are unacknowledged. The items that arrived
since its task last ran are encoded and published together; every publish's reply subject is
one inbox subscription's prefix and a counter, and that subscription's callback settles the
publish it names (no future, timer or callback per message); one sweep, armed for the oldest
publish's deadline, finds the publishes whose ack is overdue.
Errors: a publish that fails, is refused (no stream stores the subject, or the stream answers
with an error) or is not acknowledged within *ack_timeout* is retried with *backoff* under the
same ``Nats-Msg-Id`` (the stream's duplicate window drops a retry of a publish that did land),
so a retry never doubles a message; after the attempts the sink cancels upstream and
`JetStreamSink.wait` fails with `PublishError`, naming the message's sequence in the stream
the sink received (0 for the first item) and the subject. A lost connection is re-established
with *backoff*. Retried messages may land out of order.
"""

from __future__ import annotations

__all__ = ("JetStreamSink", "PublishError", "to_jetstream")

import asyncio
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar, final

import attrs

from .._core import require_not_none
from ._backoff import DEFAULT_BACKOFF, Backoff, retrying
from ._jetstream_source import _connect, _describe, _retry_on
from ._task_sink import TaskSink

T = TypeVar("T")

MSG_ID = "Nats-Msg-Id"


class PublishError(RuntimeError):
    """A message was not acknowledged after every retry."""

    def __init__(self, message: str, sequence: int, item: Any) -> None:
        super().__init__(message)
        self.sequence = sequence
        """The message's position in what the sink received (0 for the first)."""
        self.item = item


@attrs.define(eq=False, slots=True)
class _Publish:
    sequence: int
    item: Any
    subject: str
    payload: bytes
    headers: dict[str, str]
    deadline: float = 0.0
    """When the ack is overdue (set as it is sent)."""
    attempt: int = 0


def _encode(item: Any) -> bytes:
    if isinstance(item, bytes):
        return item
    if isinstance(item, str):
        return item.encode()
    raise TypeError(f"to_jetstream: pass encode= to publish {type(item).__name__} items")


@final
@attrs.define(eq=False)
class JetStreamSink(TaskSink[T], Generic[T]):
    """What `to_jetstream` returns; await it (or `wait`) for the number of messages published.

    `wait` raises `PublishError` when a message was not acknowledged after the retries,
    `ConnectionLostError` when the server stayed unreachable through the backoff, and
    upstream's error after what was received has been published.
    """

    servers: str | Sequence[str]
    subject: str | Callable[[T], str]
    encode: Callable[[T], bytes] = _encode
    max_in_flight: int = 256
    msg_id: Callable[[T], str] | None = None
    ack_timeout: float = 5.0
    backoff: Backoff = DEFAULT_BACKOFF
    published: int = attrs.field(default=0, init=False)
    most_in_flight: int = attrs.field(default=0, init=False)
    retries: int = attrs.field(default=0, init=False)
    _run_id: str = attrs.field(factory=lambda: uuid.uuid4().hex[:12], init=False)
    _items: list[T] = attrs.field(factory=list, init=False)
    """Received, not yet encoded: the task encodes and sends them together."""
    _encoded: int = attrs.field(default=0, init=False)
    _again: deque[_Publish] = attrs.field(factory=deque, init=False)
    """Publishes to send again (after a failure and its backoff delay)."""
    _in_flight: dict[int, _Publish] = attrs.field(factory=dict, init=False)
    """Sent, not acknowledged, by the token that ends its reply subject (in sending order)."""
    _token: int = attrs.field(default=0, init=False)
    _delayed: int = attrs.field(default=0, init=False)
    """Failed publishes waiting out their backoff delay before they are sent again."""
    _freed: int = attrs.field(default=0, init=False)
    _sweep: asyncio.TimerHandle | None = attrs.field(default=None, init=False)
    _client: Any = attrs.field(default=None, init=False)
    _inbox: str = attrs.field(default="", init=False)

    def __attrs_post_init__(self) -> None:
        if self.max_in_flight <= 0:
            raise ValueError(f"max_in_flight must be > 0, got {self.max_in_flight}")

    @property
    def in_flight(self) -> int:
        """Publishes sent and not acknowledged yet."""
        return len(self._in_flight)

    def on_next(self, item: T) -> None:
        if item is None:
            require_not_none(item, "2.13", "on_next's item")
        if not self._accepting:
            return
        items = self._items
        items.append(item)
        if len(items) == 1:
            self._signal()

    # -- the publisher task -------------------------------------------------------------

    async def _connect(self) -> None:
        client = self._client
        self._client = None
        if client is not None and not client.is_closed:
            await client.close()
        client = await retrying(
            lambda: _connect(self.servers), self.backoff, _describe(self.servers), _retry_on()
        )
        try:
            # Every ack arrives here; a publish's reply subject ends with its token.
            inbox = client.new_inbox()
            await client.subscribe(f"{inbox}.*", cb=self._acked)
        except BaseException:
            await client.close()
            raise
        self._client, self._inbox = client, inbox + "."

    async def _run(self) -> None:
        try:
            await self._connect()
            self._request(self.max_in_flight)
            while not self._stopped:
                if self._items or self._again:
                    if self._client.is_closed:
                        await self._connect()
                    await self._send(self._batch())
                    continue
                if self._upstream_done and not (self._in_flight or self._delayed):
                    break
                await self._idle()
        except Exception as exc:
            self._fail(exc)
        finally:
            self._stopping()
            client, self._client = self._client, None
            if client is not None and not client.is_closed:
                await client.close()
        self._finish(self.published)

    def _batch(self) -> list[_Publish]:
        """What to send now: the publishes to send again, then the new items, encoded."""
        batch = list(self._again)
        self._again.clear()
        items, self._items = self._items, []
        subject = self.subject
        encode = self.encode
        msg_id = self.msg_id
        run_id = self._run_id
        sequence = self._encoded
        self._encoded = sequence + len(items)
        append = batch.append
        for item in items:
            append(
                _Publish(
                    sequence,
                    item,
                    subject if isinstance(subject, str) else subject(item),
                    encode(item),
                    {MSG_ID: f"{run_id}-{sequence}" if msg_id is None else msg_id(item)},
                )
            )
            sequence += 1
        return batch

    async def _send(self, batch: list[_Publish]) -> None:
        assert self._loop is not None
        publish = self._client.publish
        inbox = self._inbox
        in_flight = self._in_flight
        token = self._token
        deadline = self._loop.time() + self.ack_timeout
        for index, message in enumerate(batch):
            token += 1
            message.deadline = deadline
            in_flight[token] = message
            try:
                await publish(
                    message.subject,
                    message.payload,
                    reply=f"{inbox}{token}",
                    headers=message.headers,
                )
            except _retry_on() as exc:
                del in_flight[token]
                self._token = token
                self._again.extend(batch[index + 1 :])  # (sent once connected again)
                self._failed(message, exc)
                return
        self._token = token
        if len(in_flight) > self.most_in_flight:
            self.most_in_flight = len(in_flight)
        if self._sweep is None and in_flight:
            self._sweep = self._loop.call_at(deadline, self._overdue)

    # -- acknowledgements ---------------------------------------------------------------

    async def _acked(self, msg: Any) -> None:
        """The ack inbox's callback: the stream's reply to the publish its token names."""
        message = self._in_flight.pop(int(msg.subject[len(self._inbox) :]), None)
        if message is None or self._stopped:
            return  # (overdue and already retried, or stopped)
        data = msg.data
        if data and b'"error"' not in data:
            self.published += 1
            freed = self._freed + 1
            if freed * 4 >= self.max_in_flight:  # a quarter of the window at a time
                self._request(freed)
                freed = 0
            self._freed = freed
            if not self._in_flight:
                self._signal()
            return
        # An error from the stream, or an empty status (503: no stream stores the subject).
        reason = data.decode(errors="replace") if data else (msg.headers or {}).get("Status")
        self._failed(message, ConnectionError(f"publish refused: {reason}"))

    def _overdue(self) -> None:
        """The one ack-timeout sweep: fail what is overdue, then wait for the next deadline."""
        self._sweep = None
        if self._stopped:
            return
        assert self._loop is not None
        now = self._loop.time()
        in_flight = self._in_flight
        overdue = []
        for token, message in in_flight.items():  # in sending order, so in deadline order
            if message.deadline > now:
                self._sweep = self._loop.call_at(message.deadline, self._overdue)
                break
            overdue.append(token)
        for token in overdue:
            self._failed(in_flight.pop(token), TimeoutError(f"no ack within {self.ack_timeout} s"))
        if not in_flight:
            self._signal()

    def _failed(self, message: _Publish, error: BaseException) -> None:
        if self._stopped:
            return
        message.attempt += 1
        if message.attempt > self.backoff.attempts:
            self._fail(
                PublishError(
                    f"message {message.sequence} to {message.subject} was not acknowledged "
                    f"after {self.backoff.attempts} retries: {type(error).__name__}: {error}",
                    message.sequence,
                    message.item,
                )
            )
            return
        self.retries += 1
        self._delayed += 1
        assert self._loop is not None
        self._loop.call_later(self.backoff.delay(message.attempt), self._retry, message)

    def _retry(self, message: _Publish) -> None:
        self._delayed -= 1
        if not self._stopped:
            self._again.append(message)
            self._signal()

    def _stopping(self) -> None:
        sweep, self._sweep = self._sweep, None
        if sweep is not None:
            sweep.cancel()


def to_jetstream(
    servers: str | Sequence[str],
    subject: str | Callable[[T], str],
    *,
    encode: Callable[[T], bytes] = _encode,
    max_in_flight: int = 256,
    msg_id: Callable[[T], str] | None = None,
    ack_timeout: float = 5.0,
    backoff: Backoff = DEFAULT_BACKOFF,
) -> JetStreamSink[T]:
    """A subscriber that publishes each item to *subject* (or ``subject(item)``) with acks.

    Args:
        servers: ``nats://host:port`` (or several).
        subject: Where to publish; a stream must capture it.
        encode: The payload of an item (default: bytes as they are, str as UTF-8).
        max_in_flight: The most unacknowledged publishes (and the demand window).
        msg_id: The ``Nats-Msg-Id`` of an item (default: unique per sink and position), by
            which the stream drops duplicates within its duplicate window.
        ack_timeout: Seconds to wait for a publish's ack before retrying it.
        backoff: Retries of a publish, and reconnects.
    """
    return JetStreamSink(servers, subject, encode, max_in_flight, msg_id, ack_timeout, backoff)
