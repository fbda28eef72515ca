"""``to_jetstream``: a subscriber that publishes to JetStream and waits for each publish's ack.

Backpressure: bounded; demand is the number of free ack slots: the sink asks for *max_in_flight*
items, and asks for more as the server acknowledges publishes (a quarter of the window at a
time), so never more than *max_in_flight* publishes are unacknowledged.
Errors: a publish that fails or is not acknowledged within *ack_timeout* is retried with
*backoff* under the same ``Nats-Msg-Id`` (the stream's duplicate window drops a retry of a
publish that did land), so a retry never doubles a message; after the attempts the sink
cancels upstream and `JetStreamSink.wait` fails with `PublishError`, naming the message's
sequence in the stream the sink received (0 for the first item) and the subject. A lost
connection is re-established with *backoff*. Retried messages may land out of order.
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
    attempt: int = 0
    timer: asyncio.TimerHandle | None = None


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
    in_flight: int = attrs.field(default=0, init=False)
    """Publishes sent and not acknowledged yet."""
    most_in_flight: int = attrs.field(default=0, init=False)
    retries: int = attrs.field(default=0, init=False)
    _received: int = attrs.field(default=0, init=False)
    _run_id: str = attrs.field(factory=lambda: uuid.uuid4().hex[:12], init=False)
    _pending: deque[_Publish] = attrs.field(factory=deque, init=False)
    _freed: int = attrs.field(default=0, init=False)
    _client: Any = attrs.field(default=None, init=False)
    _js: Any = attrs.field(default=None, init=False)

    def __attrs_post_init__(self) -> None:
        if self.max_in_flight <= 0:
            raise ValueError(f"max_in_flight must be > 0, got {self.max_in_flight}")

    def on_next(self, item: T) -> None:
        if item is None:
            require_not_none(item, "2.13", "on_next's item")
        if not self._accepting:
            return
        sequence = self._received
        self._received = sequence + 1
        try:
            subject = self.subject if isinstance(self.subject, str) else self.subject(item)
            payload = self.encode(item)
            msg_id = f"{self._run_id}-{sequence}" if self.msg_id is None else self.msg_id(item)
        except Exception as exc:
            self._fail(exc)
            return
        self._pending.append(_Publish(sequence, item, subject, payload, {MSG_ID: msg_id}))
        self._signal()

    # -- the publisher task -------------------------------------------------------------

    async def _connect(self) -> None:
        client = self._client
        self._client = self._js = None
        if client is not None and not client.is_closed:
            await client.close()
        client = await retrying(
            lambda: _connect(self.servers), self.backoff, _describe(self.servers), _retry_on()
        )
        self._client = client
        self._js = client.jetstream()

    async def _run(self) -> None:
        try:
            await self._connect()
            self._request(self.max_in_flight)
            pending = self._pending
            while not self._stopped:
                if pending:
                    if self._client.is_closed:
                        await self._connect()
                    await self._send(pending.popleft())
                    continue
                if self._upstream_done and not self.in_flight:
                    break
                await self._idle()
        except Exception as exc:
            self._fail(exc)
        finally:
            client, self._client = self._client, None
            if client is not None and not client.is_closed:
                await client.close()
        self._finish(self.published)

    async def _send(self, publish: _Publish) -> None:
        assert self._loop is not None
        self.in_flight += 1
        if self.in_flight > self.most_in_flight:
            self.most_in_flight = self.in_flight
        try:
            ack = await self._js.publish_async(
                publish.subject, publish.payload, headers=publish.headers
            )
        except _retry_on() as exc:
            self._settled(publish, exc)
            return
        publish.timer = self._loop.call_later(self.ack_timeout, ack.cancel)
        ack.add_done_callback(lambda done: self._acked(publish, done))

    def _acked(self, publish: _Publish, ack: asyncio.Future[Any]) -> None:
        if publish.timer is not None:
            publish.timer.cancel()
            publish.timer = None
        error: BaseException | None
        if ack.cancelled():
            error = TimeoutError(f"no ack within {self.ack_timeout} s")
        else:
            error = ack.exception()
        self._settled(publish, error)

    def _settled(self, publish: _Publish, error: BaseException | None) -> None:
        self.in_flight -= 1
        if self._stopped:
            return
        if error is None:
            self.published += 1
            freed = self._freed + 1
            if freed * 4 >= self.max_in_flight:  # a quarter of the window at a time
                self._request(freed)
                freed = 0
            self._freed = freed
            self._signal()
            return
        publish.attempt += 1
        if publish.attempt > self.backoff.attempts:
            self._fail(
                PublishError(
                    f"message {publish.sequence} to {publish.subject} was not acknowledged "
                    f"after {self.backoff.attempts} retries: {type(error).__name__}: {error}",
                    publish.sequence,
                    publish.item,
                )
            )
            return
        self.retries += 1
        assert self._loop is not None
        self._loop.call_later(self.backoff.delay(publish.attempt), self._retry, publish)

    def _retry(self, publish: _Publish) -> None:
        if not self._stopped:
            self._pending.appendleft(publish)
            self._signal()


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
