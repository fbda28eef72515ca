"""Kill -9 a JetStream → PostgreSQL job mid-stream and restart it: every message lands once.

The job acknowledges a message only after the COPY transaction that carried it committed
(ack-after-landing through the commit listener); the restarted job gets the unacknowledged
messages again, skips those already committed, reports them, and so acknowledges them.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

import asyncpg
import pytest
from nats.js import JetStreamContext
from nats.js.api import AckPolicy

from reactive_aio.connectors.nats import DEAD_LETTER_SEQUENCE
from reactive_aio.connectors.postgres import COMMITS_TABLE
from reactive_aio.connectors.servers import LocalNatsServer, LocalPostgres

from .conftest import unique

ROOT = Path(__file__).resolve().parents[2]
MESSAGES = 20_000
BAD = set(range(777, MESSAGES, 1_000))  # payloads that are not JSON: dead letters


async def start_job(*args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.connectors.landing_job",
        *args,
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def committed_batches(pg: asyncpg.Connection, table: str) -> int:
    exists = await pg.fetchval("SELECT to_regclass($1) IS NOT NULL", COMMITS_TABLE)
    if not exists:
        return 0
    return int(await pg.fetchval(f"SELECT count(*) FROM {COMMITS_TABLE} WHERE sink = $1", table))


@pytest.mark.timeout(300)
@pytest.mark.asyncio(loop_factories=["asyncio"])
@pytest.mark.parametrize("mode", ["", "exclusive"])
async def test_kill_9_mid_stream_then_restart_lands_every_message_once(
    nats_server: LocalNatsServer,
    postgres: LocalPostgres,
    js: JetStreamContext,
    stream: str,
    pg: asyncpg.Connection,
    mode: str,
) -> None:
    await js.add_stream(name=f"{stream}_DEAD", subjects=[f"{stream}_DEAD.>"])
    for i in range(MESSAGES):
        payload = b"{broken" if i in BAD else json.dumps({"i": i}).encode()
        ack = await js.publish_async(f"{stream}.flights", payload)
        if i % 1_000 == 999:
            await ack
    await js.publish_async_completed()
    table = unique("landed")
    await pg.execute(f"CREATE TABLE {table} (i bigint, sequence bigint)")
    durable = unique("job")
    args = (nats_server.url, stream, durable, postgres.dsn, table)

    # Run 1: killed from outside once a few batches have landed (delivered messages are in
    # flight, some landed, not all acknowledged).
    job = await start_job(*args, "", mode)
    while await committed_batches(pg, table) < 4:
        assert job.returncode is None, (await job.communicate())[1].decode()
        await asyncio.sleep(0.01)
    os.kill(job.pid, signal.SIGKILL)
    await job.wait()
    # Run 2: kills itself right after batch 12 committed, before acknowledging it.
    job = await start_job(*args, "12", mode)
    await asyncio.wait_for(job.wait(), 120)
    assert job.returncode == -signal.SIGKILL
    assert await committed_batches(pg, table) == 12
    landed_before = int(await pg.fetchval(f"SELECT count(*) FROM {table}"))
    assert 0 < landed_before < MESSAGES - len(BAD)

    # Run 3: to the end of the stream.
    job = await start_job(*args, "", mode)
    out, err = await asyncio.wait_for(job.communicate(), 240)
    assert job.returncode == 0, err.decode()
    report = json.loads(out.decode().strip().splitlines()[-1])

    rows = await pg.fetch(f"SELECT i FROM {table}")
    landed = [r["i"] for r in rows]
    expected = [i for i in range(MESSAGES) if i not in BAD]
    assert len(landed) == len(expected)  # 0 duplicated
    assert sorted(landed) == expected  # 0 lost
    assert report["written"] == len(expected) - landed_before
    assert report["skipped"] >= 1  # batch 12's messages: landed, redelivered, acknowledged now
    # dead letters: each bad message once, and acknowledged
    dead = await js.pull_subscribe(f"{stream}_DEAD.>", stream=f"{stream}_DEAD")
    letters = await dead.fetch(len(BAD) + 5, timeout=2)
    sequences = sorted(int(m.headers[DEAD_LETTER_SEQUENCE]) for m in letters)  # type: ignore[index]
    assert sequences == sorted(i + 1 for i in BAD)
    info = await js.consumer_info(stream, durable)
    assert info.num_pending == 0
    assert info.num_ack_pending == 0  # everything landed was acknowledged
    assert (info.config.ack_policy == AckPolicy.ALL) == (mode == "exclusive")
