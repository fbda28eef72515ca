"""Workers that scale out (``reactive-aio pipeline --worker``) on a real nats-server: three
consume one stream into one output at once; the writer of the output's first commit is killed
with SIGKILL the moment that commit is in the log, and started again with ``--resume``; then
the aggregate: every flight landed once, every reject in ``rejected/`` once, the aggregates
equal the file replay's, nothing left on the consumer. And who may share an output folder,
each refusal in one line before Spark starts."""

from __future__ import annotations

import asyncio
import io
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import nats
import pytest

from benchmarks.pipeline_workers import run_workers
from reactive_aio.connectors.nats import JetStreamSource, from_jetstream
from reactive_aio.connectors.servers import LocalNatsServer
from reactive_aio.spark import read_committed
from reactive_aio_app.pipeline import aggregate_output, run_pipeline
from reactive_aio_app.pipeline._broker import (
    RecordedSource,
    publish_flights,
    records_subject,
    tally,
)
from reactive_aio_app.pipeline._flights import (
    airline_names,
    load_raw,
    validate_chunk,
    write_corrupted_copy,
)
from reactive_aio_app.pipeline._outputs import hold_output

from .test_cli import RUNNER
from .test_run import _hourly, _multiset

pytestmark = pytest.mark.brokers


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))


async def _consumers(url: str, stream: str) -> list[str]:
    client = await nats.connect(url)
    try:
        return [info.name for info in await client.jetstream().consumers_info(stream)]
    finally:
        await client.close()


def test_three_workers_one_killed_land_every_flight_once(
    spark: Any, raw_flights: Any, nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    records, corrupted = 20_000, 12
    source = f"{nats_server.url}/flights_{uuid.uuid4().hex[:10]}"
    data = tmp_path / "flights.csv"
    write_corrupted_copy(raw_flights.slice(0, records), data, corrupted)
    asyncio.run(publish_flights(source, input_path=data, log=io.StringIO()))
    out = tmp_path / "out"

    run = run_workers(
        source,
        out,
        workers=3,
        options=("--batch-rows", "300", "--max-latency", "1", "--ack-wait", "3"),
        env=_env(),
        logs=tmp_path / "logs",
        timeout=300,
    )
    # The kill must leave valid records to land (the restarted worker and the others land
    # them, once each). Workers read the stream faster than Spark writes its first batch, so
    # the first commit, and the kill, may come late in it; any point before the end will do.
    assert 0 < run.kill.committed < records - corrupted, "the kill came after the stream"
    assert len(run.summaries) == 3
    print(f"\nkilled after {run.kill.committed:,} rows had landed; {run.seconds:.0f} s")
    for line in run.summaries:
        print(line)

    result = asyncio.run(
        aggregate_output(
            out=out, source=source, spark=spark, chart=False, progress=False, log=io.StringIO()
        )
    )
    landed = records - corrupted
    assert (result.read, result.landed, result.rejected) == (records, landed, corrupted)
    # 0 lost, 0 duplicated: events/ is the input's valid records, as a multiset.
    raw, _ = load_raw(data)
    expected = validate_chunk(raw.combine_chunks().to_batches()[0], airline_names()).accepted
    assert _multiset(read_committed(spark, out / "events").toArrow()) == _multiset(expected)
    # Every reject once, though the workers dead-lettered them on their own.
    rejected = spark.read.parquet(str(out / "rejected")).toArrow()
    assert len(set(rejected.column("source_line").to_pylist())) == rejected.num_rows == corrupted
    # One consumer for the three, and nothing left on it.
    consumer = RecordedSource.read(out)
    assert consumer is not None
    assert asyncio.run(_consumers(nats_server.url, consumer.stream)) == [consumer.durable]
    owed = asyncio.run(tally(nats_server.url, consumer))
    assert (owed.records, owed.pending, owed.unacknowledged) == (records, 0, 0)

    replay = tmp_path / "replay"
    asyncio.run(
        run_pipeline(
            out=replay, input_path=data, spark=spark, chart=False, progress=False, log=io.StringIO()
        )
    )
    assert _hourly(spark, out) == _hourly(spark, replay)


def _run(command: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", RUNNER, command, *args],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=300,
        check=False,
    )


async def _owing(url: str, stream: str, out: Path, *, exclusive: bool = False) -> None:
    """A stream with three records nobody took, and an output recorded as landed from it (by
    a run alone, with *exclusive*)."""
    client = await nats.connect(url)
    try:
        js = client.jetstream()
        await js.add_stream(name=stream, subjects=[f"{stream}.>"])
        for _ in range(3):
            await js.publish(records_subject(stream), b"{}")
    finally:
        await client.close()
    consumer = RecordedSource.new(stream)
    reader: JetStreamSource[bytes] = from_jetstream(
        url,
        stream,
        consumer.durable,
        subject=records_subject(stream),
        ack="after_landing",
        exclusive=exclusive,
    )
    await reader.create_consumer()
    (out / "events").mkdir(parents=True)
    (out / "events" / "part-0.parquet").write_bytes(b"landed")
    consumer.write(out)


@pytest.mark.parametrize(
    ("case", "option", "hint"),
    [
        ("a worker without a source", "--worker", "--source"),
        ("a worker told to overwrite", "--overwrite", "remove --out"),
        ("a run beside workers", "--out", "add --worker to join them"),
        ("a worker beside a run", "--out", "wait until it has ended"),
        ("an aggregate beside workers", "--out", "aggregate once every worker has ended"),
        ("an aggregate before the records landed", "--out", "start a worker"),
    ],
)
def test_who_may_share_an_output_is_checked_in_one_line_before_spark_starts(
    case: str, option: str, hint: str, nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    stream = f"flights_{uuid.uuid4().hex[:10]}"
    source = f"{nats_server.url}/{stream}"
    out = tmp_path / "out"
    out.mkdir()
    asyncio.run(_owing(nats_server.url, stream, out))
    held = {
        "a run beside workers": True,
        "a worker beside a run": False,
        "an aggregate beside workers": True,
    }.get(case)
    lock = None if held is None else hold_output(out, worker=held)
    pipeline = ("pipeline", "--source", source, "--out", str(out))
    aggregate = ("aggregate", "--source", source, "--out", str(out))
    try:
        completed = _run(
            *{
                "a worker without a source": ("pipeline", "--out", str(out), "--worker"),
                "a worker told to overwrite": (*pipeline, "--worker", "--overwrite"),
                "a run beside workers": (*pipeline, "--resume"),
                "a worker beside a run": (*pipeline, "--worker"),
                "an aggregate beside workers": aggregate,
                "an aggregate before the records landed": aggregate,
            }[case]
        )
    finally:
        if lock is not None:
            lock.release()
    assert completed.returncode == 2, completed.stderr
    (line,) = completed.stderr.splitlines()
    command = "aggregate" if case.startswith("an aggregate") else "pipeline"
    assert line.startswith(f"reactive-aio {command}: error: argument {option}: "), line
    assert hint in line
    assert completed.stdout.splitlines() == ["pyspark not imported"]
    assert sorted(path.name for path in (out / "events").iterdir()) == ["part-0.parquet"]


def test_workers_do_not_join_an_output_a_run_alone_landed(
    nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    # Its consumer acks all up to a message: one worker's ack would cover another's messages.
    stream = f"flights_{uuid.uuid4().hex[:10]}"
    out = tmp_path / "out"
    out.mkdir()
    asyncio.run(_owing(nats_server.url, stream, out, exclusive=True))
    completed = _run(
        "pipeline", "--source", f"{nats_server.url}/{stream}", "--out", str(out), "--worker"
    )
    assert completed.returncode == 1, completed.stderr
    assert "was landed by a run alone" in completed.stderr
    assert "continue it with --resume and no --worker" in completed.stderr
    assert sorted(path.name for path in (out / "events").iterdir()) == ["part-0.parquet"]
