"""aiohttp adapters against a real aiohttp server (AppRunner + SockSite) and real clients."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest

pytest.importorskip("aiohttp")

import aiohttp
from aiohttp import web

from reactive_aio import Flux
from reactive_aio.adapters.aiohttp import (
    ServerSentEvent,
    ndjson_response,
    request_body_publisher,
    sse_client,
    sse_response,
    stream_response,
    websocket_publisher,
    websocket_send,
)

from ._support import Probe, aiohttp_server, small_buffer_session, wait_for

pytestmark = pytest.mark.web

ITEM = 64 * 1024
WINDOW = 8
"""The body's window in the pacing test: small, so that the bound below is tight (the default
window's bound is in test_body_writes)."""
HELD = 2 * WINDOW
"""Items the response holds: the chunk being written (``write`` waits for its drain) and the
window requested meanwhile."""
SLACK = 24
"""Items in transit that do not break the bound: the kernel's send and receive buffers (64 KiB
asked on each side, doubled by Linux), aiohttp's write buffer and the client's read buffer
(64 KiB-ish each). Without backpressure the endless source would be millions ahead."""


class Boom(Exception):
    pass


def failing_after(count: int) -> Flux[str]:
    def fail(i: int) -> str:
        if i == count:
            raise Boom("source failed")
        return f"item {i}\n"

    return Flux.range(0, count + 1).map(fail)


async def test_stream_response_pace_is_set_by_a_slow_reader() -> None:
    probe = Probe()

    async def endless(request: web.Request) -> web.StreamResponse:
        return await stream_response(
            request, probe.endless(lambda i: bytes([i % 256]) * ITEM), window=WINDOW
        )

    app = web.Application()
    app.router.add_get("/", endless)
    async with aiohttp_server(app) as url, small_buffer_session() as session:
        async with session.get(url) as response:
            read = 0
            async for chunk in response.content.iter_any():
                read += len(chunk)
                delivered = read // ITEM
                assert probe.produced <= delivered + HELD + SLACK
                if delivered >= 60:
                    break
                await asyncio.sleep(0.002)  # a slow reader, not synchronisation
        await wait_for(lambda: probe.live == 0)
    assert probe.produced <= 60 + HELD + SLACK


async def test_stream_and_ndjson_responses() -> None:
    async def plain(request: web.Request) -> web.StreamResponse:
        return await stream_response(request, Flux.just("a", b"b"), content_type="text/plain")

    async def encoded(request: web.Request) -> web.StreamResponse:
        return await stream_response(request, Flux.range(0, 3), encode=lambda i: f"<{i}>")

    async def ndjson(request: web.Request) -> web.StreamResponse:
        return await ndjson_response(request, Flux.just({"a": 1}, [2]))

    app = web.Application()
    app.router.add_get("/p", plain)
    app.router.add_get("/e", encoded)
    app.router.add_get("/n", ndjson)
    async with aiohttp_server(app) as url, aiohttp.ClientSession() as session:
        async with session.get(f"{url}/p") as response:
            assert await response.text() == "ab"
            assert response.content_type == "text/plain"
        async with session.get(f"{url}/e") as response:
            assert await response.text() == "<0><1><2>"
        async with session.get(f"{url}/n") as response:
            assert response.content_type == "application/x-ndjson"
            lines = (await response.text()).splitlines()
            assert [json.loads(line) for line in lines] == [{"a": 1}, [2]]


async def test_upstream_error_aborts_the_body(caplog: pytest.LogCaptureFixture) -> None:
    async def failing(request: web.Request) -> web.StreamResponse:
        return await stream_response(request, failing_after(3))

    app = web.Application()
    app.router.add_get("/", failing)
    received = bytearray()
    async with aiohttp_server(app) as url, aiohttp.ClientSession() as session:

        async def read_all() -> None:
            async with session.get(url) as response:
                async for chunk in response.content.iter_any():
                    received.extend(chunk)

        with pytest.raises(aiohttp.ClientPayloadError):
            await read_all()
    assert received == b"item 0\nitem 1\nitem 2\n"
    assert any(r.name == "reactive_aio" and "Boom" in r.getMessage() for r in caplog.records)


async def test_sse_response_read_by_sse_client(caplog: pytest.LogCaptureFixture) -> None:
    def item(i: int) -> dict[str, int]:
        if i == 2:
            raise Boom("source failed")
        return {"n": i}

    async def events(request: web.Request) -> web.StreamResponse:
        return await sse_response(
            request,
            Flux.range(0, 3).map(item),
            event="tick",
            id=lambda d: d["n"],
            retry=1.5,
        )

    async def custom(request: web.Request) -> web.StreamResponse:
        assert request.headers["Last-Event-ID"] == "41"
        return await sse_response(request, Flux.just(ServerSentEvent("a\nb", id="42"), "plain"))

    app = web.Application()
    app.router.add_get("/", events)
    app.router.add_get("/c", custom)
    async with aiohttp_server(app) as url:
        got = await sse_client(url).to_list()
        resumed = await sse_client(f"{url}/c", last_event_id="41").to_list()
    assert got == [
        ServerSentEvent('{"n":0}', "tick", "0"),  # retry came in a block of its own
        ServerSentEvent('{"n":1}', "tick", "1"),
        ServerSentEvent("Boom: source failed", "error", "1"),
    ]
    assert resumed == [ServerSentEvent("a\nb", None, "42"), ServerSentEvent("plain", None, "42")]
    assert any(r.name == "reactive_aio" and "Boom" in r.getMessage() for r in caplog.records)


async def test_sse_client_reads_only_as_requested() -> None:
    probe = Probe()

    async def events(request: web.Request) -> web.StreamResponse:
        return await sse_response(request, probe.endless(lambda i: {"i": i}))

    app = web.Application()
    app.router.add_get("/", events)
    async with aiohttp_server(app) as url:
        first = await sse_client(url).take(5).to_list()
        assert [json.loads(e.data)["i"] for e in first] == [0, 1, 2, 3, 4]
        await wait_for(lambda: probe.live == 0)


async def test_hundred_clients_leaving_mid_stream_cancel_upstream() -> None:
    probe = Probe()

    async def events(request: web.Request) -> web.StreamResponse:
        return await sse_response(request, probe.endless(lambda i: {"i": i, "pad": "x" * 8192}))

    app = web.Application()
    app.router.add_get("/", events)
    async with aiohttp_server(app) as url:
        baseline = set(asyncio.all_tasks())
        async with small_buffer_session() as session:

            async def leave_early() -> None:
                async with session.get(url) as response:
                    await response.content.readuntil(b"\n\n")
                    response.close()  # drop the connection mid-stream

            await asyncio.gather(*(leave_early() for _ in range(100)))
            left_at = asyncio.get_running_loop().time()
            await wait_for(lambda: probe.live == 0, timeout=5)
        assert probe.subscribed == 100
        assert max(probe.cancelled_at) - left_at < 1.0
        current = asyncio.current_task()
        await wait_for(
            lambda: {t for t in asyncio.all_tasks() if t is not current} <= baseline, timeout=5
        )


async def test_websocket_echo_json_and_error_close(caplog: pytest.LogCaptureFixture) -> None:
    async def echo(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await websocket_send(ws, websocket_publisher(ws).map(str.upper))
        return ws

    async def failing(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await websocket_send(ws, failing_after(2))
        return ws

    async def numbers(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await websocket_send(ws, Flux.range(0, 3).map(lambda i: {"i": i}), mode="json")
        return ws

    app = web.Application()
    app.router.add_get("/echo", echo)
    app.router.add_get("/fail", failing)
    app.router.add_get("/n", numbers)
    async with aiohttp_server(app) as url, aiohttp.ClientSession() as session:
        async with session.ws_connect(f"{url}/echo") as ws:
            for word in ("a", "bc"):
                await ws.send_str(word)
                assert await ws.receive_str() == word.upper()
        async with session.ws_connect(f"{url}/n") as ws:
            assert [json.loads(m.data) async for m in ws] == [{"i": 0}, {"i": 1}, {"i": 2}]
        async with session.ws_connect(f"{url}/fail") as ws:
            assert [m.data async for m in ws] == ["item 0\n", "item 1\n"]
            assert ws.close_code == 1011
    assert any(r.name == "reactive_aio" and "Boom" in r.getMessage() for r in caplog.records)


async def test_websocket_client_leaving_cancels_upstream() -> None:
    probe = Probe()

    async def endless(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await websocket_send(ws, probe.endless(str))
        return ws

    app = web.Application()
    app.router.add_get("/", endless)
    async with aiohttp_server(app) as url:
        session = aiohttp.ClientSession()
        ws = await session.ws_connect(url)
        for _ in range(5):
            await ws.receive_str()
        await session.close()  # the client goes away without a close handshake
        await wait_for(lambda: probe.live == 0)


async def test_request_body_publisher_reads_a_streamed_upload() -> None:
    async def upload(request: web.Request) -> web.Response:
        sizes = await request_body_publisher(request, chunk_size=4096).map(len).to_list()
        return web.json_response({"total": sum(sizes), "max": max(sizes)})

    async def body() -> AsyncIterator[bytes]:
        for _ in range(20):
            yield b"x" * 10_000

    app = web.Application()
    app.router.add_post("/", upload)
    async with aiohttp_server(app) as url, aiohttp.ClientSession() as session:
        response = await session.post(url, data=body())
        assert await response.json() == {"total": 200_000, "max": 4096}
