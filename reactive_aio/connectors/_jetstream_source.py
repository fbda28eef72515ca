"""``from_jetstream``: a publisher over a durable JetStream pull consumer.

Backpressure: full; the source drives the consumer's pull requests itself: outstanding demand
not covered by messages in hand becomes the ``batch`` of the next request
(``$JS.API.CONSUMER.MSG.NEXT.<stream>.<durable>``, at most *max_batch*), one request at a
time, sent again once its batch is delivered or it ends (expired after *fetch_timeout*: status
408; nothing to deliver: 404; ended by the server: 409), and only while demand is uncovered,
so the source holds at most what was requested plus one batch. What a request delivers arrives
on one inbox subscription, whose callback builds the messages and hands each burst that
arrived together to the subscriber (no task or future per message).
Acknowledgement (*ack*): ``"on_delivery"`` acks each burst as it arrives, before handing it
out (at most once: a crash loses what was in hand); the consumer it creates acknowledges all
up to a message (ack-all), so one ack, the burst's last message's, covers the burst. That is
exact while one source reads the durable and its connection holds; a message the server sent
on a connection that then dropped, or to another reader of the same durable, is covered too
and not delivered again, which at most once allows (create the consumer with explicit acks
beforehand to have each message acked on its own; an existing consumer is used as it is).
``"after_processing"`` leaves it to downstream (`JetStreamMessage.ack`, ``nak``, ``term``);
``"after_landing"`` acks a message only when a batching sink reports the batch that carried it
as committed, the batch's acks sent and flushed together (the report's awaitable ends once
they reached the server): pass the source itself as the sink's ``on_commit`` and
``lambda m: [m.sequence]`` (or every sequence an item covers) as its ``positions``. Both ack
each message on its own (redelivery comes out of order) and refuse a consumer that acks all,
except an *exclusive* source under ``after_landing``, the durable's only reader: the consumer
it creates acks all up to a message, and landed messages are acked by one ack, the highest
one's, once no message below it is still open (awaiting its commit, or given back at a
cancel). While the server may hold pending messages the source never saw (delivered on a
connection that was lost, to a request given up on, or to a reader before it that crashed),
that ack waits until the consumer's pending count shows none is left. Unacknowledged messages
are redelivered by the server after *ack_wait*, so a crash or a cancel loses nothing; a sink
that finds them already committed skips them and reports them again, and they are acked then.
A message redelivered while its earlier copy is still on its way to the sink is not handed
out twice: that copy's commit acknowledges it.
Errors: a message *parse* rejects goes to the *dead_letter* subject with the reason in its
headers and is acked once the dead letter is stored; the stream flows on
(`JetStreamSource.dead_letter_messages` does the same for what a later stage rejects). Without
a dead letter such a message fails the stream after the messages before it (it stays
unacknowledged). A lost connection (closed, or silent: every request asks for idle heartbeats
twice per *fetch_timeout*, and nothing heard for *fetch_timeout* plus a second counts as lost)
is re-established with *backoff* and the durable consumer re-bound; after the configured
attempts the stream fails with `ConnectionLostError`. A request the server refuses, or a
consumer deleted under it, fails the stream with `PullRequestError` (the durable is not
created again behind its owner's back).
Cancel: the request task stops; once the pull request open then has ended (at most
*fetch_timeout* later, in the closing task), the messages it and earlier requests delivered and
that were never handed out are given back (nak) on the same connection, so they are redelivered
at once, and the connection is closed.
"""

from __future__ import annotations

__all__ = (
    "AckPolicy",
    "ConsumerAcksError",
    "JetStreamMessage",
    "JetStreamSource",
    "PullRequestError",
    "SourceStatistics",
    "from_jetstream",
)

import asyncio
import contextlib
import functools
import itertools
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, Generic, Literal, TypeVar, final

import attrs

from .._commit import CommitListener
from .._core import LoopBound, Publisher, Subscriber, require_not_none
from ._backoff import DEFAULT_BACKOFF, Backoff, retrying
from ._pull import PullSubscription

T = TypeVar("T")
R = TypeVar("R")

AckPolicy = Literal["on_delivery", "after_processing", "after_landing"]
"""When the source acknowledges a message to the server; see `from_jetstream`."""

_ACK = b"+ACK"
_NAK = b"-NAK"
_TERM = b"+TERM"
_PROGRESS = b"+WPI"
_ACK_SLICE = 2_048
"""Acknowledgements sent in one turn of the loop."""

DEAD_LETTER_REASON = "Reactive-Aio-Reason"
"""Header of a dead letter: why the message was rejected."""
DEAD_LETTER_STREAM = "Reactive-Aio-Stream"
DEAD_LETTER_SEQUENCE = "Reactive-Aio-Sequence"
DEAD_LETTER_SUBJECT = "Reactive-Aio-Subject"


class MessageParseError(ValueError):
    """A message could not be parsed and there is no dead letter to send it to."""


class ConsumerAcksError(ValueError):
    """The durable consumer acknowledges all up to a message, where the source must ack each
    message on its own."""


@final
@attrs.define(eq=False)
class JetStreamMessage(Generic[T]):
    """One message from the stream, parsed; acknowledged through the source that fetched it.

    The acknowledgements work from any connection, so a message can still be acked after its
    subscription ended or its connection was replaced.
    """

    value: T
    """What *parse* made of the payload (the payload's bytes without a parser)."""
    sequence: int
    """The stream sequence: the message's position, and what a commit record keeps."""
    subject: str
    delivered: int
    """How many times the server delivered it (1 the first time)."""
    headers: dict[str, str] | None
    data: bytes
    """The raw payload."""
    _reply: str = attrs.field(repr=False, alias="reply")
    _source: JetStreamSource[T] = attrs.field(repr=False, alias="source")
    settled: bool = attrs.field(default=False, init=False)
    """Acked, nak'ed or terminated through this object."""

    async def ack(self) -> None:
        """Acknowledge: the server will not deliver it again."""
        await self._settle(_ACK)

    async def nak(self, delay: float | None = None) -> None:
        """Ask for redelivery, after *delay* seconds if given."""
        await self._settle(_NAK if delay is None else _NAK + b" " + _delay(delay))

    async def term(self) -> None:
        """Never deliver it again, without processing it."""
        await self._settle(_TERM)

    async def in_progress(self) -> None:
        """Reset the server's ack timer: still being worked on."""
        await self._source._send([self._reply], _PROGRESS, flush=False)

    async def _settle(self, payload: bytes) -> None:
        if not self.settled:
            self.settled = True
            source = self._source
            if source._acks_all and payload in (_ACK, _TERM):
                # An ack of its own would ack every message before it: it lands instead, and
                # the floor's ack covers it.
                entry = source._awaiting_commit.pop(self.sequence, None)
                landed = source._land([self.sequence], [entry])
                if landed is not None:
                    await landed
                return
            await source._send([self._reply], payload, flush=False)


def _delay(seconds: float) -> bytes:
    return b'{"delay": %d}' % int(seconds * 1e9)


@final
@attrs.frozen
class SourceStatistics:
    """A snapshot of a `JetStreamSource` over its live subscriptions."""

    fetched: int
    """Messages the pull requests delivered and the source queued (not dead letters)."""
    in_hand: int
    """Delivered, not yet handed downstream: queued plus what the client buffered."""
    outstanding: int
    """Demand downstream signalled that no message has met yet."""
    awaiting_commit: int
    """Delivered under ``after_landing``, not yet reported committed."""
    dead_letters: int


@final
@attrs.define(eq=False)
class JetStreamSource(Publisher[JetStreamMessage[T]], CommitListener[int], LoopBound, Generic[T]):
    """What `from_jetstream` returns: cold per subscription, resumable through the durable."""

    servers: str | Sequence[str]
    stream: str
    durable: str
    subject: str | None = None
    ack: AckPolicy = "after_processing"
    max_batch: int = 256
    fetch_timeout: float = 1.0
    parse: Callable[[bytes], T] | None = None
    dead_letter: str | None = None
    stop_when_drained: bool = False
    backoff: Backoff = DEFAULT_BACKOFF
    ack_wait: float = 30.0
    max_ack_pending: int = 65_536
    exclusive: bool = False
    _awaiting_commit: dict[int, tuple[str, int]] = attrs.field(factory=dict, init=False)
    """Sequence → ack subject of each message delivered under ``after_landing``, and the
    `_JetStreamSubscription.serial` of the subscription that handed it out. (A tuple of a str
    and an int is one the cyclic collector stops tracking: a sink's batch keeps 100,000s of
    them waiting, and a full collection would walk each.)"""
    _subscriptions: list[_JetStreamSubscription[T]] = attrs.field(factory=list, init=False)
    _dead_letters: int = attrs.field(default=0, init=False)
    _acks_all: bool = attrs.field(default=False, init=False)
    """Under ``after_landing``, bound to a consumer that acks all up to a message (an
    exclusive source's): landed messages are acked by one ack at the floor (`_land`)."""
    _landed_top: tuple[int, str] | None = attrs.field(default=None, init=False)
    """The landed message of the highest sequence not yet acked, and its ack subject."""
    _landed_unacked: list[int] = attrs.field(factory=list, init=False)
    """Sequences landed since the last ack: still pending at the server."""
    _given_back: set[int] = attrs.field(factory=set, init=False)
    """Sequences delivered, never handed out and given back: the floor stays below them."""
    _doubts: int = attrs.field(default=0, init=False)
    """Times the server may have come to hold pending messages this source never saw (a lost
    connection, a request given up on, a crashed reader before it)."""
    _doubts_cleared: int = attrs.field(default=0, init=False)
    """How many of `_doubts` the server's pending count has cleared: while fewer, no ack
    leaves (`_ack_once_sure`)."""

    def __attrs_post_init__(self) -> None:
        if self.max_batch <= 0:
            raise ValueError(f"max_batch must be > 0, got {self.max_batch}")
        if self.fetch_timeout <= 0:
            raise ValueError(f"fetch_timeout must be > 0, got {self.fetch_timeout}")
        if self.ack not in ("on_delivery", "after_processing", "after_landing"):
            raise ValueError(f"unknown ack policy {self.ack!r}")
        # Checked here: the source's connections publish without the client's own check of
        # each subject (`_connect`), and these make up the subjects it publishes to itself.
        _check_name(self.stream, "stream")
        _check_name(self.durable, "durable")
        for what, subject in (("subject", self.subject), ("dead_letter", self.dead_letter)):
            if subject is not None:
                _check_subject(subject, what)

    def subscribe(self, subscriber: Subscriber[JetStreamMessage[T]]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        subscription = _JetStreamSubscription[T](subscriber, max_batch=self.max_batch, source=self)
        self._subscriptions = [s for s in self._subscriptions if not s.closed]
        self._subscriptions.append(subscription)
        subscription.begin()

    # -- CommitListener -----------------------------------------------------------------

    def committed(self, batch_id: int, positions: Sequence[int]) -> Awaitable[None] | None:
        """Acknowledge the messages at *positions*: a sink has committed them."""
        awaiting = self._awaiting_commit
        if self._acks_all:
            return self._land(positions, list(map(awaiting.pop, positions, _NONES)))
        acks = [entry[0] for entry in map(awaiting.pop, positions, _NONES) if entry is not None]
        return self._send(acks, _ACK) if acks else None

    async def dead_letter_messages(
        self, rejects: Iterable[tuple[JetStreamMessage[T], str]]
    ) -> None:
        """Store each message in the *dead_letter* subject with its reason, then acknowledge it.

        For what a stage downstream refuses after *parse* accepted it (a record its validator
        rejects): the message is handled like one *parse* refused, with the same headers, and
        counts as landed once its dead letter is stored. Under ``after_landing`` it is no
        longer awaited from a sink.

        Raises:
            ValueError: the source has no *dead_letter* subject.
        """
        dead_letter = self.dead_letter
        if dead_letter is None:
            raise ValueError(f"stream {self.stream}: dead_letter_messages needs dead_letter=")
        rejects = [(m, reason) for m, reason in rejects if not m.settled]
        if not rejects:
            return

        async def store(client: Any) -> None:
            js = client.jetstream()
            for m, reason in rejects:  # each publish waits for the stream's ack, or times out
                headers = self._letter_headers(m.sequence, m.subject, reason)
                await js.publish(dead_letter, m.data, headers=headers)
            # Stored first, acknowledged after: a crash in between cannot lose one.
            awaiting = self._awaiting_commit
            for m, _ in rejects:
                m.settled = True
                entry = awaiting.pop(m.sequence, None)
                if self._acks_all:
                    landed = self._land([m.sequence], [entry])
                    if landed is not None:
                        await landed
                else:
                    await client.publish(m._reply if entry is None else entry[0], _ACK)

        await self._on_a_connection(store)
        self._dead_letters += len(rejects)

    async def create_consumer(self) -> None:
        """Create the durable consumer with this source's settings, unless it exists.

        A subscription does this itself. Called first, under a lock that other processes
        reading through the same durable also take, it makes them agree on one consumer and
        its settings instead of racing to create it (the server refuses a second creation
        with other settings). An existing consumer keeps its settings.

        Raises:
            ConsumerAcksError: The existing consumer acknowledges all up to a message, and
                this source acks each message on its own (see `from_jetstream`).
        """

        async def ensure(client: Any) -> None:
            self._check_acks((await self._ensure_consumer(client.jetstream()))[0])

        await self._on_a_connection(ensure)

    async def _ensure_consumer(self, js: Any) -> tuple[str, int, int]:
        """Create the consumer unless it exists; return its ack policy (``"explicit"``,
        ``"all"`` or ``"none"``), how many messages it has pending acknowledgement and how
        many it has left to deliver."""
        from nats.js import api
        from nats.js.errors import NotFoundError

        try:
            info = await js.consumer_info(self.stream, self.durable)
        except NotFoundError:
            config = api.ConsumerConfig(
                durable_name=self.durable,
                # One ack covers what came before it: under on_delivery a burst's last
                # message's, under after_landing (exclusive) the floor's (see the module docs).
                ack_policy=api.AckPolicy.ALL
                if self.ack == "on_delivery" or (self.ack == "after_landing" and self.exclusive)
                else api.AckPolicy.EXPLICIT,
                ack_wait=self.ack_wait,
                max_ack_pending=self.max_ack_pending,
                filter_subject=self.subject,
            )
            info = await js.add_consumer(self.stream, config)
        policy = info.config.ack_policy
        acks = str(policy.value if isinstance(policy, api.AckPolicy) else policy)
        return acks, info.num_ack_pending or 0, info.num_pending or 0

    # -- ack-all under after_landing ------------------------------------------------------

    def _land(
        self, sequences: Sequence[int], entries: Sequence[tuple[str, int] | None]
    ) -> Awaitable[None] | None:
        """Record messages landed (their sequences, and each one's entry taken from
        ``_awaiting_commit``: None when it was not awaiting) and ack up to the floor, if it
        rose."""
        fresh = list(itertools.compress(sequences, entries))  # (an entry is a non-empty tuple)
        if fresh:
            self._landed_unacked += fresh
            top = max(fresh)
            if self._landed_top is None or top > self._landed_top[0]:
                entry = entries[sequences.index(top)]
                assert entry is not None
                self._landed_top = (top, entry[0])
        if self._landed_top is None:
            return None
        if self._doubts != self._doubts_cleared:
            return self._ack_once_sure()
        return self._ack_floor()

    def _ack_floor(self) -> Awaitable[None] | None:
        """Ack the highest landed message when no message below it is still open: awaiting
        its commit, or given back. (One ack acks every message up to it.)"""
        top = self._landed_top
        if top is None:
            return None
        awaiting, given_back = self._awaiting_commit, self._given_back
        if (awaiting and min(awaiting) < top[0]) or (given_back and min(given_back) < top[0]):
            return None  # (a later commit acks it with the floor)
        self._landed_top, self._landed_unacked = None, []
        return self._send([top[1]], _ACK)

    async def _ack_once_sure(self) -> None:
        """Ack up to the floor once the server's pending count shows that it holds no
        message this source does not know of. The count is taken after the known ones are
        counted: what the server delivered meanwhile only adds to its side, so a count no
        larger than ours leaves none unknown, as of the doubts raised before it was asked
        for. (No ack leaves while in doubt, so ours only grows meanwhile.)"""
        doubts, known = self._doubts, self._known_pending()
        info = await self._on_a_connection(
            lambda client: client.jetstream().consumer_info(self.stream, self.durable),
            flush=False,
        )
        if (info.num_ack_pending or 0) <= known:
            self._doubts_cleared = max(self._doubts_cleared, doubts)
        if self._doubts == self._doubts_cleared:
            acked = self._ack_floor()
            if acked is not None:
                await acked

    def _known_pending(self) -> int:
        """Messages of this source the server counts as pending acknowledgement."""
        if not self._acks_all:
            return len(self._awaiting_commit)
        return len(self._awaiting_commit.keys() | self._landed_unacked | self._given_back)

    def _check_acks(self, acks: str) -> bool:
        """Whether a consumer with *acks* is acked at the floor (`_land`); raise if this
        source cannot read it."""
        acks_all = acks == "all" and self.ack == "after_landing" and self.exclusive
        if acks == "all" and self.ack != "on_delivery" and not acks_all:
            raise ConsumerAcksError(
                f"stream {self.stream}: consumer {self.durable} acknowledges all up to a "
                f"message; ack={self.ack!r} needs one that acknowledges each"
                + (
                    ", or exclusive=True (the durable's only reader)"
                    if self.ack == "after_landing"
                    else ""
                )
            )
        return acks_all

    def _letter_headers(self, sequence: int, subject: str, reason: str) -> dict[str, str]:
        return {
            DEAD_LETTER_REASON: reason,
            DEAD_LETTER_STREAM: self.stream,
            DEAD_LETTER_SEQUENCE: str(sequence),
            DEAD_LETTER_SUBJECT: subject,
            # within the stream's duplicate window a second copy (a crash between storing
            # and acknowledging) is dropped by the server
            "Nats-Msg-Id": f"dead-letter-{self.stream}-{sequence}",
        }

    async def _send(self, replies: list[str], payload: bytes, *, flush: bool = True) -> None:
        async def send(client: Any) -> None:
            # A sink's batch is acked at once: 100,000 publishes would hold the loop for most
            # of a second, with deliveries (and the stages after them) waiting. Between slices
            # the loop serves them.
            for start in range(0, len(replies), _ACK_SLICE):
                if start:
                    await asyncio.sleep(0)
                for reply in replies[start : start + _ACK_SLICE]:
                    await client.publish(reply, payload)

        await self._on_a_connection(send, flush=flush)

    async def _on_a_connection(
        self, work: Callable[[Any], Awaitable[R]], *, flush: bool = True
    ) -> R:
        """Run *work* (publishes) on a live subscription's connection, else on one of its
        own; with *flush*, what it sent has reached the server when this returns (one
        message's ack, from downstream, leaves with the client's next write instead)."""
        # An ack is a publish to the message's ack subject, valid from any connection: the
        # last batch of a stream commits after the source completed and closed its own.
        for subscription in self._subscriptions:
            client = subscription._client
            if not subscription.done and client is not None and not client.is_closed:
                try:
                    result = await work(client)
                    if flush:
                        await client.flush()
                    return result
                except _retry_on():
                    break  # lost meanwhile: again on a connection of its own (acks and
                    # dead letters, by their Nats-Msg-Id, are idempotent)
        client = await retrying(
            lambda: _connect(self.servers, checked=True),
            self.backoff,
            _describe(self.servers),
            _retry_on(),
        )
        try:
            result = await work(client)
            await client.flush()
            return result
        finally:
            await client.close()

    # -- introspection ------------------------------------------------------------------

    def statistics(self) -> SourceStatistics:
        """Counts over the live subscriptions (for tests, progress and benchmarks)."""
        live = self._subscriptions
        return SourceStatistics(
            fetched=sum(s.fetched for s in live),
            in_hand=sum(s.in_hand for s in live),
            outstanding=sum(s.outstanding for s in live if not s.done),
            awaiting_commit=len(self._awaiting_commit),
            dead_letters=self._dead_letters,
        )


_NONES = itertools.repeat(None)
"""An endless iterator of None, in C: the default of ``dict.pop`` in a ``map``."""


_Outcome = Literal["delivered", "idle", "lost"]
"""How a pull request ended: it delivered messages, it expired (or found none) without any,
or its connection failed."""

_SERIALS = itertools.count()

_WATCHDOG_GRACE = 1.0
"""Seconds beyond two idle heartbeats in which neither a message, a heartbeat nor the
request's end arrived, after which the connection counts as lost."""
_CONFIRM_TIMEOUT = 5.0
"""Seconds the server has to answer the confirmed progress ack of a drained check."""


class PullRequestError(RuntimeError):
    """The server refused a pull request, or ended it for good (the consumer was deleted)."""


@final
@attrs.define(eq=False)
class _JetStreamSubscription(PullSubscription[JetStreamMessage[T]], Generic[T]):
    """Drives the consumer's pull requests itself: demand becomes the ``batch`` of the next
    request, and what it delivers arrives on one inbox subscription whose callback builds the
    messages and hands each arrival burst to the drain (no task or future per message)."""

    _source: JetStreamSource[T] = attrs.field(kw_only=True, alias="source")
    serial: int = attrs.field(factory=lambda: next(_SERIALS), init=False)
    """Tells this subscription's entries of the source's ``_awaiting_commit`` from others'."""
    _client: Any = attrs.field(default=None, init=False)
    _js: Any = attrs.field(default=None, init=False)
    _inbox: str = attrs.field(default="", init=False)
    _inbox_subscription: Any = attrs.field(default=None, init=False)
    _consumer_acks: str = attrs.field(default="explicit", init=False)
    """The bound consumer's ack policy: ``"explicit"``, ``"all"`` or ``"none"``."""
    _request: asyncio.Future[_Outcome] | None = attrs.field(default=None, init=False)
    """The open pull request's end (one request at a time), None between requests."""
    _asked: int = attrs.field(default=0, init=False)
    _left: int = attrs.field(default=0, init=False)
    """Messages the open request may still deliver."""
    _watchdog: asyncio.TimerHandle | None = attrs.field(default=None, init=False)
    _connections: int = attrs.field(default=0, init=False)
    """Connections made so far: the close callback of an earlier one is ignored."""
    _beats: int = attrs.field(default=0, init=False)
    """Idle heartbeats heard (the watchdog's sign of life when no message comes)."""
    _burst: list[JetStreamMessage[T]] = attrs.field(factory=list, init=False)
    """Messages of the arrival burst being read, handed to the drain at its end."""
    _last_reply: str = attrs.field(default="", init=False)
    _sized_by: str = attrs.field(default="", init=False)
    """Under ``stop_when_drained``: the last reply whose pending count sized a request."""
    _pending_at_open: int | None = attrs.field(default=None, init=False)
    """The consumer's messages left to deliver when the connection opened, until a request
    is sized by it (under ``stop_when_drained``)."""
    _handed: list[JetStreamMessage[T]] = attrs.field(factory=list, init=False)
    """Under ``after_processing``: messages handed out, pruned of the acknowledged ones."""
    _undelivered: list[str] = attrs.field(factory=list, init=False)
    """Once cancelled: the ack subjects of the messages delivered and never handed out."""

    @property
    def in_hand(self) -> int:
        inbox = self._inbox_subscription
        return self.queued + len(self._burst) + (inbox.pending_msgs if inbox is not None else 0)

    # -- PullSubscription ---------------------------------------------------------------

    async def _open(self) -> None:
        source = self._source
        await retrying(self._connect, source.backoff, _describe(source.servers), _retry_on())

    async def _connect(self) -> None:
        source = self._source
        await self._drop_connection()
        self._burst = []  # (unacknowledged: the server delivers them again)
        self._connections += 1
        client = await _connect(
            source.servers, functools.partial(self._closed, self._connections), checked=True
        )
        try:
            js = client.jetstream()
            acks, unacknowledged, pending = await source._ensure_consumer(js)
            acks_all = source._acks_all = source._check_acks(acks)
            if acks_all and unacknowledged > source._known_pending():
                source._doubts += 1  # (delivered on a connection lost, or to a reader gone)
            inbox = client.new_inbox()
            self._inbox_subscription = await client.subscribe(inbox, cb=self._arrived)
        except BaseException:
            await client.close()
            raise
        self._client, self._js, self._inbox, self._consumer_acks = client, js, inbox, acks
        self._pending_at_open = pending

    async def _fetch(self, n: int) -> Sequence[JetStreamMessage[T]] | None:
        source = self._source
        assert self._loop is not None
        if source.stop_when_drained:
            # What the consumer had left to deliver, as the newest word on it says: its state
            # when this connection opened, then the last delivery's. Asking for no more than
            # that, the request ends as it fills; none left, the drained check comes first:
            # no request waits out its expiry at the end of a replay, or at the start of one
            # with nothing to deliver (an empty dead letter).
            last, pending = self._last_reply, -1
            if self._pending_at_open is not None:
                pending, self._pending_at_open = self._pending_at_open, None
                self._sized_by = last  # (a reply from before the connection is older)
            elif last and last is not self._sized_by:
                self._sized_by = last
                pending = _pending_after(last)
            if pending == 0 and await self._drained_else_reopen():
                return None
            if 0 < pending < n:
                n = pending
        client = self._client
        request: asyncio.Future[_Outcome] = self._loop.create_future()
        self._request, self._asked, self._left = request, n, n
        # The request ends by itself after fetch_timeout (status 408); while it waits the
        # server sends a heartbeat twice in that time, so silence means a lost connection.
        expires = int(source.fetch_timeout * 1e9)
        self._watch(-1, -1)
        try:
            await client.publish(
                f"$JS.API.CONSUMER.MSG.NEXT.{source.stream}.{source.durable}",
                b'{"batch":%d,"expires":%d,"idle_heartbeat":%d}' % (n, expires, expires // 2),
                reply=self._inbox,
            )
        except _retry_on():
            self._end("lost")
        try:
            # Shielded: cancelled, this task leaves the request open, and `_close` awaits its end.
            outcome = await asyncio.shield(request)
        finally:
            if request.done() and self._watchdog is not None:
                self._watchdog.cancel()
        if outcome == "lost" or client.is_closed:
            # What was delivered and not acknowledged comes again.
            await self._open()
        elif outcome == "idle" and source.stop_when_drained and await self._drained_else_reopen():
            return None
        return []  # (what arrived went to the queue as it came)

    # -- the inbox ----------------------------------------------------------------------

    async def _arrived(self, msg: Any) -> None:
        """The inbox subscription's callback: a message of the open request, or a status."""
        request = self._request
        if request is None:
            # A request given up on: what it delivered comes again after ack_wait, and until
            # then the server holds it pending, unseen by the floor.
            if msg.subject != self._inbox:
                self._source._doubts += 1
            return
        try:
            reply = msg.reply
            if msg.subject == self._inbox:
                await self._status(msg)
                return
            self._left -= 1
            self._last_reply = reply
            source = self._source
            sequence, delivered = _sequence_and_deliveries(msg)
            handed = source._awaiting_commit.get(sequence)
            if handed is not None and handed[1] == self.serial:
                # Redelivered (its ack_wait ran out) while the copy this subscription handed
                # out is still on its way to the sink: that copy's commit acknowledges it,
                # through the newest delivery's subject. Handing it out again would land it
                # twice. (A new subscription gets what an ended one left uncommitted.)
                source._awaiting_commit[sequence] = (reply, self.serial)
            else:
                parse = source.parse
                data = msg.data
                try:
                    value = data if parse is None else parse(data)
                except Exception as exc:
                    await self._reject(msg, sequence, f"{type(exc).__name__}: {exc}")
                else:
                    self._burst.append(
                        JetStreamMessage(
                            value,
                            sequence,
                            msg.subject,
                            delivered,
                            msg.headers,
                            data,
                            reply,
                            source,
                        )
                    )
            if self._left == 0:
                await self._queue_burst()
                self._end("delivered")
            elif not self._inbox_subscription.pending_msgs:
                await self._queue_burst()  # the end of what has arrived so far
        except Exception as exc:
            # (nats-py would only pass it to its error callback)
            if self._request is request:
                self._request = None
                request.set_exception(exc)

    async def _status(self, msg: Any) -> None:
        """A status message of the pull protocol (an empty message on the inbox itself)."""
        from nats.js.api import Header

        headers = msg.headers or {}
        status = headers.get(Header.STATUS.value)
        description = headers.get(Header.DESCRIPTION, "")
        if status == "100":  # an idle heartbeat, or flow control awaiting an empty reply
            self._beats += 1
            if msg.reply:
                await self._client.publish(msg.reply, b"")
            return
        await self._queue_burst()
        # 404: nothing to deliver now; 408: the request expired; 409: it ended otherwise
        # (the consumer's max_waiting, a leadership change): a next request follows.
        if status in ("404", "408") or (status == "409" and "Deleted" not in description):
            self._end("delivered" if self._left < self._asked else "idle")
            return
        source = self._source
        raise PullRequestError(
            f"stream {source.stream} consumer {source.durable}: pull request ended with "
            f"{status} {description}"
        )

    async def _queue_burst(self) -> None:
        """Acknowledge a burst under ``on_delivery`` (one ack under an ack-all consumer), then
        queue it for the drain, recording what awaits a later acknowledgement."""
        burst = self._burst
        if not burst:
            return
        self._burst = []
        source = self._source
        if self._done:  # cancelled while they arrived: given back (or left to ack_wait) too
            self._undelivered += [message._reply for message in burst]
            if source._acks_all:
                source._given_back.update(message.sequence for message in burst)
            return
        ack = source.ack
        if ack == "on_delivery":
            acks = self._consumer_acks
            if acks == "all":  # (not a dead letter's after it: that waits for its store)
                await self._client.publish(burst[-1]._reply, _ACK)
            elif acks == "explicit":
                publish = self._client.publish
                for message in burst:
                    await publish(message._reply, _ACK)
        elif ack == "after_landing":
            awaiting, serial = source._awaiting_commit, self.serial
            for message in burst:
                awaiting[message.sequence] = (message._reply, serial)
            if source._given_back:  # delivered again: awaiting its commit now
                source._given_back.difference_update(message.sequence for message in burst)
        else:
            handed = self._handed
            handed.extend(burst)
            if len(handed) > 4 * self._max_batch:
                self._handed = [m for m in handed if not m.settled]
        self._queue.extend(burst)
        self.fetched += len(burst)
        self._drain()

    def _end(self, outcome: _Outcome) -> None:
        request = self._request
        if request is not None:
            self._request = None
            request.set_result(outcome)

    def _watch(self, left: int, beats: int) -> None:
        """Arm the watchdog; when it fires with nothing heard since (no message, heartbeat or
        end of the request), the connection is lost."""
        if left == self._left and beats == self._beats:
            self._end("lost")
        elif self._request is not None:
            assert self._loop is not None
            self._watchdog = self._loop.call_later(
                self._source.fetch_timeout + _WATCHDOG_GRACE, self._watch, self._left, self._beats
            )

    async def _closed(self, connection: int) -> None:
        if connection == self._connections:  # (not an earlier one, closed late)
            self._end("lost")

    async def _reject(self, msg: Any, sequence: int, reason: str) -> None:
        source = self._source
        # What came before it is delivered first (and, under ack-all, awaits its commit
        # before the floor can pass it).
        await self._queue_burst()
        if source.dead_letter is None:
            raise MessageParseError(
                f"stream {source.stream} sequence {sequence} ({msg.subject}): {reason}"
            )
        headers = source._letter_headers(sequence, msg.subject, reason)
        # Stored first, acknowledged after: a crash in between cannot lose it.
        await self._js.publish(source.dead_letter, msg.data, headers=headers)
        if source._acks_all:
            landed = source._land([sequence], [(msg.reply, self.serial)])
            if landed is not None:
                await landed
        else:
            await self._client.publish(msg.reply, _ACK)
        source._dead_letters += 1

    async def _drained(self) -> bool:
        """Nothing left to deliver, and nothing delivered elsewhere awaits redelivery."""
        source = self._source
        if self._last_reply and self._consumer_acks != "none":
            # The server applies a consumer's acks in order, but apart from answering its API:
            # the state asked for below could still count acks just sent on this connection as
            # pending, and a drained replay would then wait out a request's expiry. A progress
            # ack with a reply is answered once every ack before it is applied (on a message
            # acknowledged already it changes nothing; on one awaiting a commit it restarts
            # the ack timer).
            await self._client.request(self._last_reply, _PROGRESS, timeout=_CONFIRM_TIMEOUT)
        info = await self._js.consumer_info(source.stream, source.durable)
        mine = source._known_pending() if source.ack == "after_landing" else 0
        self._handed = [m for m in self._handed if not m.settled]
        return bool(info.num_pending == 0 and info.num_ack_pending <= mine + len(self._handed))

    async def _drained_else_reopen(self) -> bool:
        """`_drained`, where a server that does not answer is a connection lost: reopened."""
        try:
            return await self._drained()
        except _retry_on():
            await self._open()
            return False

    def _release(self) -> None:
        # Delivered but never handed downstream: give them back (below) instead of letting
        # them wait out ack_wait, and stop counting them as awaiting a commit.
        undelivered = [*self._queue, *self._burst]
        self._burst = []
        source = self._source
        awaiting = source._awaiting_commit
        for message in undelivered:
            awaiting.pop(message.sequence, None)
        if source._acks_all:
            source._given_back.update(message.sequence for message in undelivered)
        self._undelivered = [message._reply for message in undelivered]
        super()._release()

    async def _close(self) -> None:
        # Given back on this subscription's own connection, once the request open at the
        # cancel has ended (its batch delivered, expired, or nothing to deliver): the server
        # reads a connection in order, so it takes the naks after that end and cannot send a
        # naked message into that request; and all the request delivered has arrived and is
        # given back too. Closing at once would drop what was still on its way, and naks from
        # another connection could reach the server before it let go of the request: either
        # way, lost until ack_wait. The wait is at most fetch_timeout (the watchdog's grace
        # beyond it), in this closing task, off the caller's path. (Cancelled from outside or
        # failed, the source has nothing to give back.)
        try:
            if not self._done or self._source.ack == "on_delivery":
                return  # (what it delivered and nobody acknowledged comes again after ack_wait)
            request = self._request
            if request is not None:
                try:
                    if await request == "lost":
                        return  # (the server redelivers after ack_wait)
                except Exception:
                    return  # (ended by a failure: the same)
            undelivered, self._undelivered = self._undelivered, []
            client = self._client
            if undelivered and client is not None and not client.is_closed:
                with contextlib.suppress(*_retry_on()):
                    for reply in undelivered:
                        await client.publish(reply, _NAK)
                    await client.flush()
        finally:
            self._request = None  # (its end, if it comes now, concerns no one)
            if self._watchdog is not None:
                self._watchdog.cancel()
            await self._drop_connection()

    async def _drop_connection(self) -> None:
        client, self._client, self._js, self._inbox_subscription = self._client, None, None, None
        if client is not None and not client.is_closed:
            await client.close()


def _sequence_and_deliveries(msg: Any) -> tuple[int, int]:
    """The stream sequence and delivery count from a message's ack subject.

    ``$JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.…`` (9 tokens), or with domain and
    account hash after ``ACK`` (11 or 12). Read here directly: the client's ``metadata`` also
    builds a datetime and two objects per message, which the hot path does not need.
    """
    tokens = msg.reply.split(".")
    if len(tokens) == 9:
        return int(tokens[5]), int(tokens[4])
    if len(tokens) >= 11 and tokens[0] == "$JS":
        return int(tokens[7]), int(tokens[6])
    meta = msg.metadata  # not a JetStream reply: the client raises NotJSMessageError
    return meta.sequence.stream, meta.num_delivered


def _pending_after(reply: str) -> int:
    """The consumer's pending count after a message, from its ack subject (the token after
    the timestamp); -1 when the subject is not a JetStream one."""
    tokens = reply.split(".")
    if len(tokens) == 9:
        return int(tokens[8])
    if len(tokens) >= 11 and tokens[0] == "$JS":
        return int(tokens[10])
    return -1


def _check_name(name: str, what: str) -> None:
    """A stream's or a consumer's name, as JetStream takes it: a token of an API subject."""
    if not name or any(c.isspace() or not c.isprintable() or c in ".*>/\\" for c in name):
        raise ValueError(
            f"{what} {name!r} is not a JetStream name (no whitespace, '.', '*', '>' or slash)"
        )


def _check_subject(subject: str, what: str) -> None:
    if not subject or any(c.isspace() for c in subject) or "" in subject.split("."):
        raise ValueError(f"{what} {subject!r} is not a NATS subject")


async def _connect(
    servers: str | Sequence[str],
    closed: Callable[[], Awaitable[None]] | None = None,
    *,
    checked: bool = False,
) -> Any:
    """One connection attempt without nats-py's own reconnects: `Backoff` decides, and a
    lost connection becomes a new one with the durable consumer bound again. *closed* is
    called once the connection closed, whether lost or closed here. *checked*: every subject
    published on it is checked already (a source's: the server's ack subjects, and subjects
    made of the names `JetStreamSource` checked), so the client skips its check per publish,
    which it would otherwise make once per ack."""
    import nats

    return await nats.connect(
        servers if isinstance(servers, str) else list(servers),
        allow_reconnect=False,
        skip_subject_validation=checked,
        closed_cb=closed,
        connect_timeout=2,
        max_reconnect_attempts=1,
        reconnect_time_wait=0,
        error_cb=_ignore,  # failures surface as exceptions here; the default only logs them
    )


async def _ignore(error: Exception) -> None:
    pass


def _retry_on() -> tuple[type[BaseException], ...]:
    import nats.errors

    return (
        OSError,
        TimeoutError,
        nats.errors.NoServersError,
        nats.errors.ConnectionClosedError,
        nats.errors.StaleConnectionError,
    )


def _describe(servers: str | Sequence[str]) -> str:
    return servers if isinstance(servers, str) else ", ".join(servers)


def from_jetstream(
    servers: str | Sequence[str],
    stream: str,
    durable: str,
    *,
    subject: str | None = None,
    ack: AckPolicy = "after_processing",
    max_batch: int = 256,
    fetch_timeout: float = 1.0,
    parse: Callable[[bytes], T] | None = None,
    dead_letter: str | None = None,
    stop_when_drained: bool = False,
    backoff: Backoff = DEFAULT_BACKOFF,
    ack_wait: float = 30.0,
    max_ack_pending: int = 65_536,
    exclusive: bool = False,
) -> JetStreamSource[T]:
    """A publisher of *stream*'s messages through the durable pull consumer *durable*.

    The consumer is created (ack-all under ``"on_delivery"`` and an *exclusive*
    ``"after_landing"``, explicit acks otherwise, *ack_wait*, *max_ack_pending*, filtered on
    *subject*) if it does not exist; an existing one is used as it is, which is how a
    restarted job resumes where its acknowledgements left off. See the module docs for
    backpressure, the ack policies, dead letters and reconnects.

    Args:
        servers: ``nats://host:port`` (or several).
        stream: The stream's name.
        durable: The durable consumer's name.
        subject: Filter subject of a consumer created here (default: all of the stream).
        ack: ``"on_delivery"``, ``"after_processing"`` or ``"after_landing"``.
        max_batch: The largest pull request (messages).
        fetch_timeout: Seconds one pull request waits for messages before it expires; the
            server sends an idle heartbeat twice in that time.
        parse: Turns a payload into the message's value; what raises is dead-lettered.
        dead_letter: Subject (captured by a stream) for messages *parse* rejects.
        stop_when_drained: Complete once the consumer has nothing pending and nothing
            awaiting redelivery (instead of waiting for new messages forever); checked when
            a connection opens and when a delivery says nothing is left, so a drained
            consumer never waits out a request's expiry.
        backoff: Reconnect policy.
        ack_wait: Seconds before the server redelivers an unacknowledged message; under
            ``after_landing`` it must exceed the sink's time to commit a batch.
        max_ack_pending: The most unacknowledged messages the server lets the consumer have;
            under ``after_landing`` it must exceed a sink batch.
        exclusive: This source is the durable's only reader, in any process: under
            ``after_landing`` the consumer it creates acknowledges all up to a message, and
            each commit is acked with one ack (see the module docs).
    """
    return JetStreamSource(
        servers,
        stream,
        durable,
        subject,
        ack,
        max_batch,
        fetch_timeout,
        parse,
        dead_letter,
        stop_when_drained,
        backoff,
        ack_wait,
        max_ack_pending,
        exclusive,
    )
