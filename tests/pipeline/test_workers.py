"""Workers that scale out (``reactive-aio pipeline --worker``) on a real nats-server: who may
share an output folder, each refusal in one line before Spark starts."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from pathlib import Path

import nats
import pytest

from reactive_aio.connectors.nats import JetStreamSource, from_jetstream
from reactive_aio.connectors.servers import LocalNatsServer
from reactive_aio.pipeline._broker import RecordedSource, records_subject
from reactive_aio.pipeline._outputs import hold_output

from .test_cli import RUNNER

pytestmark = pytest.mark.brokers


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))


def _run(command: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", RUNNER, command, *args],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=300,
        check=False,
    )


async def _owing(url: str, stream: str, out: Path) -> None:
    """A stream with three records nobody took, and an output recorded as landed from it."""
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
        url, stream, consumer.durable, subject=records_subject(stream)
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
