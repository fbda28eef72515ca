"""The main job from a JetStream stream (``--source nats://…``), on a real nats-server and local
Spark: killed with SIGKILL mid-stream and resumed, every flight lands once; a malformed message
goes to the dead letter and the rest land."""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import nats
import pytest

from reactive_aio.connectors.nats import DEAD_LETTER_REASON, DEAD_LETTER_SEQUENCE
from reactive_aio.connectors.servers import LocalNatsServer
from reactive_aio.pipeline import run_pipeline
from reactive_aio.pipeline._broker import RecordedSource, publish_flights
from reactive_aio.pipeline._flights import airline_names, validate_chunk, write_corrupted_copy
from tests.spark.processes import crash_when

from .test_run import _hourly, _multiset

pytestmark = pytest.mark.brokers


def _stream() -> str:
    return f"flights_{uuid.uuid4().hex[:10]}"


async def _consumer_state(url: str, stream: str, durable: str) -> tuple[int, int]:
    client = await nats.connect(url)
    try:
        info = await client.jetstream().consumer_info(stream, durable)
        return info.num_pending, info.num_ack_pending
    finally:
        await client.close()


async def _dead_letters(url: str, stream: str) -> list[Any]:
    client = await nats.connect(url)
    try:
        js = client.jetstream()
        reader = await js.pull_subscribe(f"{stream}.dead", stream=stream)
        letters: list[Any] = []
        while True:
            try:
                batch = await reader.fetch(100, timeout=1)
            except nats.errors.TimeoutError:
                return letters
            for letter in batch:
                await letter.ack()
            letters += batch
    finally:
        await client.close()


def test_a_killed_run_from_the_stream_resumes_and_lands_every_flight_once(
    spark: Any, raw_flights: Any, nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    limit, batch = 30_000, 2_000
    stream = _stream()
    asyncio.run(publish_flights(f"{nats_server.url}/{stream}", limit=limit, log=io.StringIO()))
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    command = [
        *(sys.executable, "-m", "reactive_aio", "pipeline", "--master", "local[2]"),
        *("--source", f"{nats_server.url}/{stream}", "--out", str(out)),
        *("--batch-rows", str(batch), "--ack-wait", "5", "--no-chart", "--no-progress"),
    ]
    commits = out / "events" / "_reactive_aio" / "commits"
    crash_when(command, env, tmp_path / "first.log", lambda: len(list(commits.glob("*.json"))) >= 2)
    landed_before = len(list(commits.glob("*.json")))
    assert landed_before < limit // batch, "the kill came after the stream"

    started = time.monotonic()
    resumed = subprocess.run(
        [*command, "--resume"], env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    print(f"resumed run: {time.monotonic() - started:.1f} s; {resumed.stdout.splitlines()[0]}")
    assert "resumed: skipped " in resumed.stdout  # redelivered messages found committed
    assert f"landed {limit:,}, rejected 0" in resumed.stdout

    # 0 lost, 0 duplicated: events/ is the data set's accepted records as a multiset.
    events = spark.read.parquet(str(out / "events")).toArrow()
    raw = raw_flights.slice(0, limit).combine_chunks().to_batches()[0]
    expected = validate_chunk(raw, airline_names()).accepted
    assert events.num_rows == limit
    assert _multiset(events) == _multiset(expected)
    # Everything the runs took was acknowledged, nothing is left for the consumer.
    consumer = RecordedSource.read(out)
    assert consumer is not None
    assert asyncio.run(_consumer_state(nats_server.url, stream, consumer.durable)) == (0, 0)

    # The aggregates equal those of the file replay of the same records.
    replay = tmp_path / "replay"
    asyncio.run(
        run_pipeline(
            out=replay, limit=limit, spark=spark, chart=False, progress=False, log=io.StringIO()
        )
    )
    assert _hourly(spark, out) == _hourly(spark, replay)


def test_malformed_messages_go_to_the_dead_letter_and_the_rest_land(
    spark: Any, raw_flights: Any, nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    stream = _stream()
    url = f"{nats_server.url}/{stream}"
    data = tmp_path / "corrupted.csv"
    bad_lines = write_corrupted_copy(raw_flights.slice(0, 2_000), data, 20)
    asyncio.run(publish_flights(url, input_path=data, log=io.StringIO()))

    async def publish_garbage() -> None:
        client = await nats.connect(nats_server.url)
        try:
            await client.jetstream().publish(f"{stream}.records", b"\x00 not a record")
        finally:
            await client.close()

    asyncio.run(publish_garbage())
    log = io.StringIO()
    result = asyncio.run(
        run_pipeline(
            out=tmp_path / "out",
            source=url,
            spark=spark,
            batch_rows=500,
            chart=False,
            progress=False,
            log=log,
        )
    )
    assert (result.read, result.landed, result.rejected) == (2_001, 1_980, 21)
    assert f"rejected/ (what this run sent to the dead letter {stream}.dead)" in log.getvalue()

    letters = asyncio.run(_dead_letters(nats_server.url, stream))
    assert len(letters) == 21  # each reject once
    reasons = [letter.headers[DEAD_LETTER_REASON] for letter in letters]
    assert all(":" in reason for reason in reasons)
    garbage = [letter for letter in letters if letter.data == b"\x00 not a record"]
    assert len(garbage) == 1
    assert garbage[0].headers[DEAD_LETTER_REASON].startswith("record: not JSON")
    # The validator's rejects carry the record's line in the file it was published from.
    lines = sorted(
        json.loads(letter.data)["_line"] for letter in letters if letter.data.startswith(b"{")
    )
    published_as_text = [line for line in bad_lines if line not in lines]
    assert len(lines) + len(published_as_text) + 1 == 21
    rejected = spark.read.parquet(str(tmp_path / "out" / "rejected")).toArrow()
    assert sorted(rejected.column("source_line").to_pylist()) == sorted(
        int(letter.headers[DEAD_LETTER_SEQUENCE]) for letter in letters
    )
    consumer = RecordedSource.read(tmp_path / "out")
    assert consumer is not None
    assert asyncio.run(_consumer_state(nats_server.url, stream, consumer.durable)) == (0, 0)
