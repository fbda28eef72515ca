"""``reactive-aio nats-server``: the nats extra's server with JetStream, run as a user runs it
(a child process): it prints the URL to use, says in one line that a port is busy, and stops
the server on Ctrl-C or SIGTERM, keeping the store."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.app.test_publish import run_cli

pytestmark = pytest.mark.brokers


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def _refused(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except ConnectionRefusedError:
        return True
    return False


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_runs_jetstream_prints_the_url_and_stops_on_a_signal(
    stop: signal.Signals, tmp_path: Path
) -> None:
    port, store = _free_port(), tmp_path / "store"
    server = subprocess.Popen(
        [sys.executable, "-m", "reactive_aio_app", "nats-server", "--port", str(port)],
        cwd=tmp_path,  # the default store is nats-store/ there
        env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)),  # this checkout's code
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    try:
        first = server.stdout.readline()
        url = f"nats://127.0.0.1:{port}"
        assert first.startswith(f"nats-server with JetStream listening on {url}, store in ")
        assert f"reactive-aio publish --to {url}/flights" in server.stdout.readline()
        assert f"reactive-aio pipeline --source {url}/flights" in server.stdout.readline()
        # JetStream answers at the printed URL: publish fills a stream there.
        code, out, err = run_cli("publish", "--to", f"{url}/served", "--limit", "10")
        assert code == 0, err
        assert "published 10 messages to served.records" in out
        # A second server on that port: one line, before anything started.
        code, out, err = run_cli("nats-server", "--port", str(port), "--store", str(store))
        assert code == 2
        (line,) = err.splitlines()
        assert line.startswith("reactive-aio nats-server: error: argument --port: ")
        assert f"127.0.0.1:{port} is in use" in line
        assert not store.exists()
        server.send_signal(stop)
        rest, errors = server.communicate(timeout=30)
    finally:
        if server.poll() is None:  # the test failed: the command stops its server on SIGTERM
            server.terminate()
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
    assert server.returncode == 0, errors
    assert errors == ""
    kept = tmp_path / "nats-store"
    assert rest.splitlines()[-1] == f"nats-server stopped; the store stays in {kept}"
    assert _refused(port)  # the server the command started is gone with it
    assert (kept / "store" / "jetstream").is_dir()
    assert (kept / "nats.log").is_file()
