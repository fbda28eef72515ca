"""A job for the kill test: JetStream → to_postgres, acknowledged after landing.

``python -m tests.connectors.landing_job URL STREAM DURABLE DSN TABLE [DIE_AT [exclusive]]`` consumes
STREAM through DURABLE until it is drained, lands each message's ``i`` in TABLE, dead-letters
payloads that are not JSON to ``<STREAM>_DEAD.letters``, and prints what it wrote as JSON.
With DIE_AT it kills itself (SIGKILL) once batch DIE_AT has committed, before the batch's
messages are acknowledged: the worst moment for exactly-once. With ``exclusive`` the source is
the durable's only reader (one ack per commit through an ack-all consumer).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import Awaitable, Sequence
from typing import Any

import attrs

from reactive_aio import Flux
from reactive_aio.connectors.nats import JetStreamMessage, JetStreamSource, from_jetstream
from reactive_aio.connectors.postgres import PostgresSink, to_postgres


def rows(message: JetStreamMessage[Any]) -> list[tuple[int, int]]:
    return [(int(message.value["i"]), message.sequence)]


@attrs.define
class DieAfterCommit:
    """A commit listener in front of the source's that dies at batch *die_at*."""

    source: JetStreamSource[Any]
    die_at: int

    def committed(self, batch_id: int, positions: Sequence[int]) -> Awaitable[None] | None:
        if batch_id == self.die_at:
            os.kill(os.getpid(), signal.SIGKILL)
        return self.source.committed(batch_id, positions)


async def main(
    url: str, stream: str, durable: str, dsn: str, table: str, die_at: str = "", mode: str = ""
) -> None:
    source: JetStreamSource[Any] = from_jetstream(
        url,
        stream,
        durable,
        ack="after_landing",
        parse=json.loads,
        dead_letter=f"{stream}_DEAD.letters",
        stop_when_drained=True,
        max_batch=200,
        fetch_timeout=0.3,
        ack_wait=2.0,
        exclusive=mode == "exclusive",
    )
    sink: PostgresSink[JetStreamMessage[Any]] = to_postgres(
        dsn,
        table,
        ["i", "sequence"],
        rows=rows,
        batch_size=250,
        max_latency=0.1,
        positions=lambda message: [message.sequence],
        on_commit=DieAfterCommit(source, int(die_at)) if die_at else source,
    )
    Flux.from_publisher(source).subscribe(sink)
    written = await sink
    print(json.dumps({"written": written, "skipped": sink.skipped, "batches": sink.batches}))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:8]))
