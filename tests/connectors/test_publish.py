"""``reactive-aio publish``: the data set into a JetStream stream, once per record."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest
from nats.js import JetStreamContext

from reactive_aio import Flux
from reactive_aio.connectors.nats import from_jetstream
from reactive_aio.connectors.servers import LocalNatsServer
from reactive_aio.pipeline._broker import parse_nats_url

from .conftest import unique


async def cli(*args: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "reactive_aio",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate()
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


@pytest.mark.timeout(300)
@pytest.mark.asyncio(loop_factories=["asyncio"])
async def test_publish_replays_records_once_even_when_run_twice(
    nats_server: LocalNatsServer, js: JetStreamContext
) -> None:
    name = unique("flights")
    for _ in range(2):
        code, out, err = await cli(
            "publish", "--to", f"{nats_server.url}/{name}", "--limit", "3000"
        )
        assert code == 0, err
        assert f"published 3,000 messages to {name}.records" in out
    assert (await js.stream_info(name)).state.messages == 3_000  # the rerun was deduplicated
    messages = await Flux.from_publisher(
        from_jetstream(
            nats_server.url,
            name,
            "check",
            ack="on_delivery",
            parse=json.loads,
            stop_when_drained=True,
            fetch_timeout=0.3,
        )
    ).to_list()
    records = [m.value for m in messages]
    assert len({r["_line"] for r in records}) == 3_000
    assert {"carrier", "dep_delay", "time_hour"} <= set(records[0])
    await js.delete_stream(name)


async def test_publish_rejects_a_url_without_a_stream() -> None:
    code, _, err = await cli("publish", "--to", "nats://127.0.0.1:4222")
    assert code == 2
    assert "expected nats://HOST:PORT/STREAM" in err
    with pytest.raises(ValueError, match="STREAM"):
        parse_nats_url("http://127.0.0.1/x")
