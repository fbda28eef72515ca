"""Starlette/FastAPI adapters against a real uvicorn server and real clients."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")
pytest.importorskip("uvicorn")
pytest.importorskip("websockets")

import httpx
import websockets
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket

from reactive_aio import Flux
from reactive_aio.adapters._sse import SSEParser
from reactive_aio.adapters.starlette import (
    ndjson_response,
    request_body_publisher,
    sse_response,
    streaming_response,
    websocket_publisher,
    websocket_send,
)

from ._support import SMALL_BUFFER, Probe, uvicorn_server, wait_for

pytestmark = pytest.mark.web

ITEM = 64 * 1024
WINDOW = 8
"""The body's window in the pacing test: small, so that the bound below is tight (the default
window's bound is in test_body_writes)."""
HELD = 3 * WINDOW
"""Items the response holds: the chunk uvicorn's transport still holds (``send`` returns once
a chunk is in the transport's buffer and waits for the drain before the next one), the chunk
waiting for that drain and the window requested meanwhile."""
SLACK = 24
"""Items that may sit between the source and the client's reads without breaking the bound:
the kernel's send and receive buffers (asked for 64 KiB each, which Linux doubles), the
server transport's write buffer (64 KiB high-water mark) and httpx's read buffer, each a few
64 KiB items, with room to spare. Without backpressure the endless source would be millions
of items ahead."""


def small_buffer_client(**kwargs: Any) -> httpx.AsyncClient:
    transport = httpx.AsyncHTTPTransport(
        socket_options=[(socket.SOL_SOCKET, socket.SO_RCVBUF, SMALL_BUFFER)]
    )
    return httpx.AsyncClient(transport=transport, timeout=10, **kwargs)


class Boom(Exception):
    pass


def failing_after(count: int) -> Flux[str]:
    def fail(i: int) -> str:
        if i == count:
            raise Boom("source failed")
        return f"item {i}\n"

    return Flux.range(0, count + 1).map(fail)


async def test_streaming_response_pace_is_set_by_a_slow_reader() -> None:
    probe = Probe()

    async def endless(request: Request) -> Response:
        return streaming_response(probe.endless(lambda i: bytes([i % 256]) * ITEM), window=WINDOW)

    async with (
        uvicorn_server(Starlette(routes=[Route("/", endless)])) as url,
        small_buffer_client() as client,
    ):
        async with client.stream("GET", url) as response:
            read = 0
            async for chunk in response.aiter_raw():
                read += len(chunk)
                delivered = read // ITEM
                assert probe.produced <= delivered + HELD + SLACK
                if delivered >= 60:
                    break
                await asyncio.sleep(0.002)  # a slow reader, not synchronisation
        await wait_for(lambda: probe.live == 0)
    assert probe.produced <= 60 + HELD + SLACK


async def test_streaming_response_bytes_str_and_encode() -> None:
    async def plain(request: Request) -> Response:
        return streaming_response(Flux.just("a", b"b", "c"), media_type="text/plain")

    async def encoded(request: Request) -> Response:
        return streaming_response(Flux.range(0, 3), encode=lambda i: f"<{i}>")

    async def ndjson(request: Request) -> Response:
        return ndjson_response(Flux.just({"a": 1}, [2], "x"))

    app = Starlette(routes=[Route("/p", plain), Route("/e", encoded), Route("/n", ndjson)])
    async with uvicorn_server(app) as url, httpx.AsyncClient(timeout=10) as client:
        response = await client.get(f"{url}/p")
        assert response.text == "abc"
        assert response.headers["content-type"].startswith("text/plain")
        assert (await client.get(f"{url}/e")).text == "<0><1><2>"
        response = await client.get(f"{url}/n")
        assert response.headers["content-type"] == "application/x-ndjson"
        assert [json.loads(line) for line in response.text.splitlines()] == [{"a": 1}, [2], "x"]


async def test_streaming_response_upstream_error_aborts_the_body(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def failing(request: Request) -> Response:
        return streaming_response(failing_after(3))

    async with (
        uvicorn_server(Starlette(routes=[Route("/", failing)])) as url,
        httpx.AsyncClient(timeout=10) as client,
    ):
        received = bytearray()

        async def read_all() -> None:
            async with client.stream("GET", url) as response:
                async for chunk in response.aiter_raw():
                    received.extend(chunk)

        with pytest.raises(httpx.RemoteProtocolError):
            await read_all()
    assert received == b"item 0\nitem 1\nitem 2\n"
    assert any(r.name == "reactive_aio" and "Boom" in r.getMessage() for r in caplog.records)


async def test_streaming_response_bad_item_fails_the_stream() -> None:
    async def bad(request: Request) -> Response:
        return streaming_response(Flux.just(b"ok", 42))

    async with (
        uvicorn_server(Starlette(routes=[Route("/", bad)])) as url,
        httpx.AsyncClient(timeout=10) as client,
    ):
        with pytest.raises(httpx.RemoteProtocolError):
            await client.get(url)


async def sse_events(response: httpx.Response, count: int | None = None) -> list[object]:
    parser = SSEParser()
    events: list[object] = []
    async for chunk in response.aiter_raw():
        events.extend(parser.feed(chunk))
        if count is not None and len(events) >= count:
            break
    return events


async def test_sse_response_fields_retry_and_error_event(caplog: pytest.LogCaptureFixture) -> None:
    def item(i: int) -> dict[str, int]:
        if i == 2:
            raise Boom("source failed")
        return {"n": i}

    async def events(request: Request) -> Response:
        return sse_response(
            Flux.range(0, 3).map(item), event="tick", id=lambda d: d["n"], retry=2.5
        )

    async def multiline(request: Request) -> Response:
        return sse_response(Flux.just("one\ntwo", "three"))

    app = Starlette(routes=[Route("/", events), Route("/m", multiline)])
    async with uvicorn_server(app) as url, httpx.AsyncClient(timeout=10) as client:
        response = await client.get(url)
        multi = await client.get(f"{url}/m")
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["cache-control"] == "no-cache"
    assert response.text.startswith("retry: 2500\n\n")
    parser = SSEParser()
    parsed = list(parser.feed(response.content))
    assert [(e.event, e.id, e.data) for e in parsed] == [
        ("tick", "0", '{"n":0}'),
        ("tick", "1", '{"n":1}'),
        ("error", "1", "Boom: source failed"),  # the id persists, as the SSE algorithm says
    ]
    assert parser.retry == 2500
    assert [e.data for e in SSEParser().feed(multi.content)] == ["one\ntwo", "three"]
    assert any(r.name == "reactive_aio" and "Boom" in r.getMessage() for r in caplog.records)


async def test_sse_keep_alive_comments_while_idle() -> None:
    async def idle(request: Request) -> Response:
        return sse_response(Flux.never(), keep_alive=0.05)

    async with (
        uvicorn_server(Starlette(routes=[Route("/", idle)])) as url,
        httpx.AsyncClient(timeout=10) as client,
        client.stream("GET", url) as response,
    ):
        seen = b""
        async for chunk in response.aiter_raw():
            seen += chunk
            if seen.count(b": keep-alive\n\n") >= 2:
                break
    assert list(SSEParser().feed(seen)) == []


async def test_hundred_clients_leaving_mid_stream_cancel_upstream() -> None:
    probe = Probe()

    async def events(request: Request) -> Response:
        # Large events fill the small socket buffers after a few dozen, so the 100 streams
        # spend their time blocked on the transport, as slow real clients make them.
        return sse_response(probe.endless(lambda i: {"i": i, "pad": "x" * 8192}))

    async with uvicorn_server(Starlette(routes=[Route("/", events)])) as url:
        baseline = set(asyncio.all_tasks())
        async with small_buffer_client(limits=httpx.Limits(max_connections=200)) as client:

            async def leave_early() -> None:
                async with client.stream("GET", url) as response:
                    await sse_events(response, count=3)

            await asyncio.gather(*(leave_early() for _ in range(100)))
            left_at = asyncio.get_running_loop().time()
            await wait_for(lambda: probe.live == 0, timeout=5)
        assert probe.subscribed == 100
        assert max(probe.cancelled_at) - left_at < 1.0
        current = asyncio.current_task()
        await wait_for(
            lambda: {t for t in asyncio.all_tasks() if t is not current} <= baseline, timeout=5
        )


async def test_websocket_send_and_publisher_echo() -> None:
    async def echo(websocket: WebSocket) -> None:
        await websocket.accept()
        await websocket_send(websocket, websocket_publisher(websocket).map(str.upper))

    async def numbers(websocket: WebSocket) -> None:
        await websocket.accept()
        await websocket_send(websocket, Flux.range(0, 3).map(lambda i: {"i": i}), mode="json")

    app = Starlette(routes=[WebSocketRoute("/echo", echo), WebSocketRoute("/n", numbers)])
    async with uvicorn_server(app) as url:
        ws_url = url.replace("http", "ws")
        async with websockets.connect(f"{ws_url}/echo") as ws:
            for word in ("a", "bc", "def"):
                await ws.send(word)
                assert await ws.recv() == word.upper()
        async with websockets.connect(f"{ws_url}/n") as ws:
            got = [json.loads(message) async for message in ws]
            assert got == [{"i": 0}, {"i": 1}, {"i": 2}]
            assert ws.close_code == 1000


async def test_websocket_upstream_error_closes_with_1011(caplog: pytest.LogCaptureFixture) -> None:
    async def failing(websocket: WebSocket) -> None:
        await websocket.accept()
        await websocket_send(websocket, failing_after(2))

    async with uvicorn_server(Starlette(routes=[WebSocketRoute("/", failing)])) as url:
        ws = await websockets.connect(url.replace("http", "ws"))
        got = [await ws.recv(), await ws.recv()]
        with pytest.raises(websockets.ConnectionClosedError) as closed:
            await ws.recv()
        assert got == ["item 0\n", "item 1\n"]
        assert closed.value.rcvd is not None
        assert closed.value.rcvd.code == 1011
    assert any(r.name == "reactive_aio" and "Boom" in r.getMessage() for r in caplog.records)


async def test_websocket_client_leaving_cancels_upstream() -> None:
    probe = Probe()

    async def endless(websocket: WebSocket) -> None:
        await websocket.accept()
        await websocket_send(websocket, probe.endless(str))

    async with uvicorn_server(Starlette(routes=[WebSocketRoute("/", endless)])) as url:
        # The server floods the socket, so the close handshake may not finish: don't wait long.
        async with websockets.connect(url.replace("http", "ws"), close_timeout=0.2) as ws:
            for _ in range(5):
                await ws.recv()
        await wait_for(lambda: probe.live == 0)


async def test_request_body_publisher_reads_a_streamed_upload() -> None:
    async def upload(request: Request) -> Response:
        sizes = await request_body_publisher(request).map(len).to_list()
        return JSONResponse({"total": sum(sizes)})

    async def body() -> AsyncIterator[bytes]:
        for _ in range(20):
            yield b"x" * 10_000

    async with (
        uvicorn_server(Starlette(routes=[Route("/", upload, methods=["POST"])])) as url,
        httpx.AsyncClient(timeout=10) as client,
    ):
        response = await client.post(url, content=body())
    assert response.json() == {"total": 200_000}
