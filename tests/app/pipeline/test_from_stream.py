"""The main job from a JetStream stream (``--source nats://…``) on a real nats-server and local
Spark, killed with SIGKILL at the worst moment and resumed: every flight lands once, every
malformed message is in the dead letter once, and the aggregates equal the file replay's."""

from __future__ import annotations

import asyncio
import io
import json
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import nats
import pytest

from reactive_aio import PositionSet
from reactive_aio.connectors.nats import DEAD_LETTER_REASON, DEAD_LETTER_SEQUENCE
from reactive_aio.connectors.servers import LocalNatsServer
from reactive_aio_app.pipeline import run_pipeline
from reactive_aio_app.pipeline._broker import RecordedSource, publish_flights
from reactive_aio_app.pipeline._flights import (
    airline_names,
    load_raw,
    validate_chunk,
    write_corrupted_copy,
)
from tests.spark.processes import kill_hard

from .test_run import _hourly, _multiset

pytestmark = pytest.mark.brokers


class AckDroppingRelay:
    """A TCP relay to a local port that, once `hold` is called, drops the acknowledgements its
    clients send (publishes to ``$JS.ACK.…``) and passes everything else, both ways.

    A job behind it keeps fetching, committing and dead-lettering, but its acknowledgements
    never arrive: killed then, it leaves committed messages unacknowledged, the case a resumed
    run must skip rather than land again. (Holding all that the job sends made the test depend
    on timing: a dead letter or the report of a commit on its way at the hold waited for the
    server until the run failed, before its next commit, whenever that came later.)
    """

    def __init__(self, port: int) -> None:
        self._target = port
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._holding = threading.Event()
        self._sockets: list[socket.socket] = []
        self._threads = [threading.Thread(target=self._accept, daemon=True)]
        self._threads[0].start()

    def hold(self) -> None:
        self._holding.set()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self._target))
            self._sockets += [client, upstream]
            for source, target, outbound in ((client, upstream, True), (upstream, client, False)):
                thread = threading.Thread(
                    target=self._pipe, args=(source, target, outbound), daemon=True
                )
                self._threads.append(thread)
                thread.start()

    def _pipe(self, source: socket.socket, target: socket.socket, outbound: bool) -> None:
        unread = b""  # (outbound: the start of a protocol operation not wholly received yet)
        try:
            while data := source.recv(65_536):
                if outbound:
                    unread, data = self._filter(unread + data)
                target.sendall(data)
        except OSError:
            pass
        for end in (source, target):
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _filter(self, data: bytes) -> tuple[bytes, bytes]:
        """Split what a client sent into whole operations (a line; ``PUB`` and ``HPUB`` with
        their payload, whose size ends the line); return the unfinished rest, and the whole
        operations without the acknowledgements once holding."""
        kept: list[bytes] = []
        start = 0
        while (eol := data.find(b"\r\n", start)) >= 0:
            words = data[start:eol].split()
            end = eol + 2
            if words and words[0].upper() in (b"PUB", b"HPUB"):
                end += int(words[-1]) + 2
                if end > len(data):
                    break
                if self._holding.is_set() and words[1].startswith(b"$JS.ACK."):
                    start = end
                    continue
            kept.append(data[start:end])
            start = end
        return data[start:], b"".join(kept)

    def close(self) -> None:
        self._listener.close()
        for end in self._sockets:
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            end.close()
        for thread in self._threads:
            thread.join(10)


async def _consumer_state(url: str, stream: str, durable: str) -> tuple[int, int, int]:
    """Pending, unacknowledged, and the stream sequence everything up to is acknowledged."""
    client = await nats.connect(url)
    try:
        info = await client.jetstream().consumer_info(stream, durable)
        assert info.ack_floor is not None
        return info.num_pending or 0, info.num_ack_pending or 0, info.ack_floor.stream_seq or 0
    finally:
        await client.close()


async def _publish_garbage(url: str, subject: str) -> None:
    client = await nats.connect(url)
    try:
        await client.jetstream().publish(subject, b"\x00 not a record")
    finally:
        await client.close()


async def _dead_letters(url: str, stream: str) -> list[Any]:
    client = await nats.connect(url)
    try:
        reader = await client.jetstream().pull_subscribe(f"{stream}.dead", stream=stream)
        letters: list[Any] = []
        while True:
            try:
                batch = await reader.fetch(100, timeout=1)
            except TimeoutError:
                return letters
            for letter in batch:
                await letter.ack()
            letters += batch
    finally:
        await client.close()


def _commits(out: Path) -> list[PositionSet]:
    folder = out / "events" / "_reactive_aio" / "commits"
    return [
        PositionSet.from_json(json.loads(path.read_text())["positions"])
        for path in sorted(folder.glob("*.json"))
    ]


def _wait_for(ready: Any, process: subprocess.Popen[Any], log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert process.poll() is None, log.read_text()[-3000:]
        assert time.monotonic() < deadline, f"not ready after {timeout} s"
        time.sleep(0.02)


def test_a_run_from_the_stream_killed_before_its_acks_resumes_and_lands_every_flight_once(
    spark: Any, raw_flights: Any, nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    records, corrupted, batch = 30_000, 30, 2_000
    stream = f"flights_{uuid.uuid4().hex[:10]}"
    data = _corrupted_at_both_ends(raw_flights.slice(0, records), tmp_path, corrupted)
    asyncio.run(publish_flights(f"{nats_server.url}/{stream}", input_path=data, log=io.StringIO()))
    asyncio.run(_publish_garbage(nats_server.url, f"{stream}.records"))
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    options = [
        *("--out", str(out), "--master", "local[2]", "--batch-rows", str(batch)),
        *("--ack-wait", "5", "--max-latency", "1", "--no-chart", "--no-progress"),
    ]
    command = [sys.executable, "-m", "reactive_aio_app", "pipeline", *options]

    # Run 1, through the relay: once two batches landed, its acknowledgements stop reaching the
    # server; it is killed with SIGKILL once one more batch has committed.
    relay = AckDroppingRelay(nats_server.port)
    log = tmp_path / "first.log"
    try:
        with log.open("w") as output:
            first = subprocess.Popen(
                [*command, "--source", f"nats://127.0.0.1:{relay.port}/{stream}"],
                env=env,
                stdout=output,
                stderr=output,
            )
        _wait_for(lambda: len(_commits(out)) >= 2, first, log, 300)
        relay.hold()
        held_at = len(_commits(out))
        _wait_for(lambda: len(_commits(out)) > held_at, first, log, 120)
        kill_hard(first)
    finally:
        relay.close()
    commits = _commits(out)
    committed = PositionSet().union(*commits)
    unacknowledged = PositionSet().union(*commits[held_at:])  # committed after the hold
    assert len(committed) < records - corrupted, "the kill came after the stream"
    _, _, acked_up_to = asyncio.run(_consumer_state(nats_server.url, stream, _durable(out)))
    assert not unacknowledged.overlaps(0, acked_up_to + 1)
    # Run 1 acknowledged its batches in order: what it committed above the server's ack floor
    # is exactly what it landed and never acknowledged.
    landed_unacknowledged = committed - PositionSet.from_ranges([(0, acked_up_to + 1)])

    # Run 2: --resume, straight to the server. The server redelivers what run 1 did not
    # acknowledge; what of it is committed is skipped (and acknowledged), the rest lands.
    started = time.monotonic()
    resumed = subprocess.run(
        [*command, "--resume", "--source", f"{nats_server.url}/{stream}"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    seconds = time.monotonic() - started
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    skipped = int(
        resumed.stdout.split("resumed: skipped ", 1)[1].split(" records", 1)[0].replace(",", "")
    )
    print(
        f"\nrun 2 ({seconds:.0f} s): {len(committed):,} records committed by run 1, "
        f"{len(landed_unacknowledged):,} of them unacknowledged ({len(unacknowledged):,} "
        f"committed after the hold), {skipped:,} skipped as landed"
    )
    assert len(unacknowledged) <= skipped == len(landed_unacknowledged)

    # 0 lost, 0 duplicated: events/ is the input's valid records, as a multiset.
    raw, unreadable = load_raw(data)
    expected = validate_chunk(raw.combine_chunks().to_batches()[0], airline_names()).accepted
    events = spark.read.parquet(str(out / "events")).toArrow()
    assert events.num_rows == expected.num_rows == records - corrupted
    assert _multiset(events) == _multiset(expected)
    # Every malformed message (and the payload that is not a record) is in the dead letter
    # once, with its reason, though some were redelivered and dead-lettered again.
    letters = asyncio.run(_dead_letters(nats_server.url, stream))
    sequences = [int(letter.headers[DEAD_LETTER_SEQUENCE]) for letter in letters]
    assert len(sequences) == len(set(sequences)) == corrupted + 1
    reasons = {letter.data: letter.headers[DEAD_LETTER_REASON] for letter in letters}
    assert reasons[b"\x00 not a record"].startswith("record: not JSON")
    assert all(":" in reason for reason in reasons.values())
    assert unreadable.num_rows == sum(not data.startswith(b"{") for data in reasons) - 1
    # Nothing is left pending or unacknowledged.
    assert asyncio.run(_consumer_state(nats_server.url, stream, _durable(out)))[:2] == (0, 0)

    # The aggregates equal those of the file replay of the same records.
    replay = tmp_path / "replay"
    result = asyncio.run(
        run_pipeline(
            out=replay,
            input_path=data,
            spark=spark,
            batch_rows=10_000,
            chart=False,
            progress=False,
            log=io.StringIO(),
        )
    )
    assert (result.landed, result.rejected) == (records - corrupted, corrupted)
    assert _hourly(spark, out) == _hourly(spark, replay)


def _corrupted_at_both_ends(rows: Any, folder: Path, count: int) -> Path:
    """*rows* as CSV with a third of *count* corrupted records among the first 2,000 (run 1
    dead-letters them and acknowledges that) and the rest among the last third (run 2's, but
    for those run 1 dead-letters after the hold, whose acknowledgements the relay drops)."""
    data = folder / "flights.csv"
    head, tail = 2_000, rows.num_rows * 2 // 3
    parts = [
        (rows.slice(0, head), count // 3),
        (rows.slice(head, tail - head), 0),
        (rows.slice(tail), count - count // 3),
    ]
    lines: list[str] = []
    for index, (part, bad) in enumerate(parts):
        path = folder / f"part-{index}.csv"
        write_corrupted_copy(part, path, bad)
        lines += path.read_text().splitlines()[0 if index == 0 else 1 :]
    data.write_text("\n".join(lines) + "\n")
    return data


def _durable(out: Path) -> str:
    consumer = RecordedSource.read(out)
    assert consumer is not None
    return consumer.durable
