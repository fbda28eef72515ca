"""The data set as a broker stream: ``reactive-aio publish --to nats://HOST:PORT/NAME``.

Every raw flight record becomes one JetStream message on ``NAME.records`` in stream ``NAME``
(created if missing): a JSON object of the record's fields as the file had them (strings, or
null when absent) plus ``_line``, its line in the file. A line that could not even be split
into fields is published as its raw text, so a consumer dead-letters it with a reason rather
than lose it. Each message's ``Nats-Msg-Id`` is ``NAME-<line>``: publishing the same file
again within the stream's duplicate window adds nothing.
"""

from __future__ import annotations

__all__ = ("PublishResult", "parse_nats_url", "publish_flights")

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO, final
from urllib.parse import urlsplit

import attrs

from .. import Flux
from ..connectors.nats import JetStreamSink, to_jetstream
from ._flights import load_raw


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
) -> PublishResult:
    """Replay the data set (or *input_path*) into the JetStream stream named by *url*."""
    import nats

    servers, name = parse_nats_url(url)
    started = time.perf_counter()
    client = await nats.connect(servers)
    try:
        js = client.jetstream()
        try:
            await js.stream_info(name)
        except nats.js.errors.NotFoundError:
            await js.add_stream(name=name, subjects=[f"{name}.>"])
    finally:
        await client.close()
    raw, rejected = load_raw(input_path)
    if limit is not None:
        raw = raw.slice(0, limit)
    subject = f"{name}.records"
    sink: JetStreamSink[tuple[int, bytes]] = to_jetstream(
        servers,
        subject,
        encode=lambda message: message[1],
        msg_id=lambda message: f"{name}-{message[0]}",
        max_in_flight=1_024,
    )
    Flux.from_iterable(_messages(raw, rejected)).subscribe(sink)
    published = await sink
    result = PublishResult(published, name, subject, time.perf_counter() - started)
    print(
        f"published {published:,} messages to {subject} (stream {name}) in {result.seconds:.1f} s",
        file=log,
    )
    return result
