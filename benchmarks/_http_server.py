"""Server process for the HTTP workloads: ``python -m benchmarks._http_server SERVER LOOP``.

``SERVER`` is ``uvicorn`` (a FastAPI app served by uvicorn with its default settings) or
``aiohttp`` (an ``aiohttp.web`` application); ``LOOP`` is ``asyncio`` or ``uvloop``. The server
binds 127.0.0.1 on a port the OS picks, prints ``{"port": P, "pid": PID}`` on one line once it
accepts connections, and serves until it is terminated. Both servers answer the same routes,
each with ``?n=`` items (it also exits when its stdin closes, so it never outlives its parent):

- ``/ndjson/ours`` — the adapter's ``ndjson_response`` over ``Flux.range(0, n).map(record)``
  (``&window=W`` passes a window), ``/ndjson/plain`` — the framework's own streaming response
  over an async generator that yields one encoded line per item;
- ``/ndjson/chunked?lines=L`` — the framework's streaming response over an async generator that
  yields *L* lines at a time, joined by ``str.join`` over ``map`` and encoded to bytes once per
  chunk: what an expert writes for speed, the adapters' floor;
- ``/sse/ours`` and ``/sse/plain`` — the same for server-sent events;
- ``/_calls/start`` and ``/_calls/stop`` — count the Python calls this process makes in
  between (``sys.setprofile`` on the loop's thread), for the calls-per-item figures.

Both forms write byte-identical bodies, so the client checks every response the same way.
"""

# No ``from __future__ import annotations`` here: FastAPI reads the handlers' annotations at
# runtime, and ``Request`` is imported inside the app factory.
import asyncio
import json
import os
import socket
import sys
import threading
from collections.abc import AsyncIterator, Callable
from types import FrameType
from typing import Any

if __package__ in (None, ""):  # run as a script: make the `benchmarks` package importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks._harness import loop_factory

__all__ = ("SERVERS", "ndjson_line", "record", "sse_event")

SERVERS = ("uvicorn", "aiohttp")


def record(i: int) -> dict[str, int]:
    """The item behind line *i*."""
    return {"i": i}


_encode = json.JSONEncoder(separators=(",", ":")).encode
"""Compact JSON with one encoder made once, as the adapters encode: the floors and the adapters
spend the same on the JSON itself, so the ratios measure what surrounds it."""


def ndjson_line(i: int) -> bytes:
    """Line *i* of an NDJSON body, as the adapters encode it (compact JSON)."""
    return (_encode(record(i)) + "\n").encode()


def sse_event(i: int) -> bytes:
    """Event *i* of an SSE body, as the adapters encode it (one ``data:`` line)."""
    return b"data: " + _encode(record(i)).encode() + b"\n\n"


async def _plain(n: int, encode: Callable[[int], bytes]) -> AsyncIterator[bytes]:
    for i in range(n):
        yield encode(i)


async def _ndjson_chunked(n: int, lines: int) -> AsyncIterator[bytes]:
    # No Python frame per line beyond record() and the encoder's own call.
    for start in range(0, n, lines):
        chunk = map(record, range(start, min(n, start + lines)))
        yield ("\n".join(map(_encode, chunk)) + "\n").encode()


class _CallCounter:
    """Counts Python calls on the thread that starts it (the server's loop thread)."""

    def __init__(self) -> None:
        self.calls = 0

    def _profile(self, frame: FrameType, event: str, arg: object) -> None:
        if event == "call":
            self.calls += 1

    def start(self) -> None:
        self.calls = 0
        sys.setprofile(self._profile)

    def stop(self) -> int:
        sys.setprofile(None)
        return self.calls


def _fastapi_app() -> Any:
    from fastapi import FastAPI, Request
    from fastapi.responses import PlainTextResponse, Response, StreamingResponse

    from reactive_aio import Flux
    from reactive_aio.adapters.starlette import ndjson_response, sse_response

    app = FastAPI()
    counter = _CallCounter()

    def size(request: Request) -> int:
        return int(request.query_params["n"])

    @app.get("/ndjson/ours")
    async def ndjson_ours(request: Request) -> Response:
        items = Flux.range(0, size(request)).map(record)
        window = request.query_params.get("window")
        if window is None:
            return ndjson_response(items)
        return ndjson_response(items, window=int(window))

    @app.get("/ndjson/plain")
    async def ndjson_plain(request: Request) -> Response:
        return StreamingResponse(
            _plain(size(request), ndjson_line), media_type="application/x-ndjson"
        )

    @app.get("/ndjson/chunked")
    async def ndjson_chunked(request: Request) -> Response:
        lines = int(request.query_params["lines"])
        return StreamingResponse(
            _ndjson_chunked(size(request), lines), media_type="application/x-ndjson"
        )

    @app.get("/sse/ours")
    async def sse_ours(request: Request) -> Response:
        return sse_response(Flux.range(0, size(request)).map(record))

    @app.get("/sse/plain")
    async def sse_plain(request: Request) -> Response:
        return StreamingResponse(_plain(size(request), sse_event), media_type="text/event-stream")

    @app.get("/_calls/start")
    async def calls_start() -> Response:
        counter.start()
        return PlainTextResponse("0")

    @app.get("/_calls/stop")
    async def calls_stop() -> Response:
        return PlainTextResponse(str(counter.stop()))

    return app


def _aiohttp_app() -> Any:
    from aiohttp import web

    from reactive_aio import Flux
    from reactive_aio.adapters.aiohttp import ndjson_response, sse_response

    counter = _CallCounter()

    async def stream(
        request: web.Request, chunks: AsyncIterator[bytes], content_type: str
    ) -> web.StreamResponse:
        response = web.StreamResponse()
        response.content_type = content_type
        await response.prepare(request)
        async for chunk in chunks:
            await response.write(chunk)
        await response.write_eof()
        return response

    async def plain(
        request: web.Request, encode: Callable[[int], bytes], content_type: str
    ) -> web.StreamResponse:
        return await stream(request, _plain(int(request.query["n"]), encode), content_type)

    async def ndjson_ours(request: web.Request) -> web.StreamResponse:
        items = Flux.range(0, int(request.query["n"])).map(record)
        window = request.query.get("window")
        if window is None:
            return await ndjson_response(request, items)
        return await ndjson_response(request, items, window=int(window))

    async def ndjson_plain(request: web.Request) -> web.StreamResponse:
        return await plain(request, ndjson_line, "application/x-ndjson")

    async def ndjson_chunked(request: web.Request) -> web.StreamResponse:
        chunks = _ndjson_chunked(int(request.query["n"]), int(request.query["lines"]))
        return await stream(request, chunks, "application/x-ndjson")

    async def sse_ours(request: web.Request) -> web.StreamResponse:
        items = Flux.range(0, int(request.query["n"])).map(record)
        return await sse_response(request, items)

    async def sse_plain(request: web.Request) -> web.StreamResponse:
        return await plain(request, sse_event, "text/event-stream")

    async def calls_start(request: web.Request) -> web.Response:
        counter.start()
        return web.Response(text="0")

    async def calls_stop(request: web.Request) -> web.Response:
        return web.Response(text=str(counter.stop()))

    app = web.Application()
    app.router.add_get("/ndjson/ours", ndjson_ours)
    app.router.add_get("/ndjson/plain", ndjson_plain)
    app.router.add_get("/ndjson/chunked", ndjson_chunked)
    app.router.add_get("/sse/ours", sse_ours)
    app.router.add_get("/sse/plain", sse_plain)
    app.router.add_get("/_calls/start", calls_start)
    app.router.add_get("/_calls/stop", calls_stop)
    return app


def _announce(sock: socket.socket) -> None:
    port = sock.getsockname()[1]
    print(json.dumps({"port": port, "pid": os.getpid()}), flush=True)


async def _serve_uvicorn(sock: socket.socket) -> None:
    import uvicorn

    # uvicorn's defaults (http="auto": httptools when installed, else h11), quieter logging.
    config = uvicorn.Config(_fastapi_app(), lifespan="off", log_level="warning")
    server = uvicorn.Server(config)
    serving = asyncio.ensure_future(server.serve(sockets=[sock]))
    while not server.started:
        if serving.done():
            serving.result()
        await asyncio.sleep(0.01)
    _announce(sock)
    await serving


async def _serve_aiohttp(sock: socket.socket) -> None:
    from aiohttp import web

    runner = web.AppRunner(_aiohttp_app())
    await runner.setup()
    await web.SockSite(runner, sock).start()
    _announce(sock)
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


def _exit_with_parent() -> None:
    # The parent holds our stdin open; when it goes (even killed), stdin reaches EOF and the
    # server goes too, so no server outlives the benchmark that started it.
    sys.stdin.read()
    os._exit(0)


def main(argv: list[str]) -> int:
    """Serve until terminated, or until the parent closes our stdin."""
    server, loop = argv
    threading.Thread(target=_exit_with_parent, daemon=True).start()
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    if server == "aiohttp":
        sock.listen(128)
        serve = _serve_aiohttp
    elif server == "uvicorn":
        serve = _serve_uvicorn
    else:
        raise SystemExit(f"unknown server {server!r}; expected one of {SERVERS}")
    with asyncio.Runner(loop_factory=loop_factory(loop)) as runner:
        runner.run(serve(sock))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
