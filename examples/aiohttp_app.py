"""An aiohttp service streaming with reactive_aio: ``python examples/aiohttp_app.py``.

Run it in the venv that ``scripts/setup`` made (``. .venv/bin/activate`` first, or
``.venv/bin/python examples/aiohttp_app.py``). It starts aiohttp on http://127.0.0.1:8080. Try:

* ``curl -N http://127.0.0.1:8080/ticks``          server-sent events, one per 0.5 s
* ``curl -N 'http://127.0.0.1:8080/numbers.ndjson?count=5'`` NDJSON paced by the client
* ``curl --data-binary @big.bin http://127.0.0.1:8080/upload`` a body read only as fast as it is used
* a websocket client on ws://127.0.0.1:8080/echo   upper-cases what you send
* ``http://127.0.0.1:8080/relay`` consumes /ticks with `sse_client` and re-serves it doubled

Stop the client and the work upstream stops with it: the socket is the demand.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

from aiohttp import web

from reactive_aio import Flux
from reactive_aio.adapters.aiohttp import (
    ndjson_response,
    request_body_publisher,
    sse_client,
    sse_response,
    websocket_publisher,
    websocket_send,
)

PORT = 8080
ALLOWED_ORIGINS = frozenset({"http://localhost:3000"})
"""Pages served from these origins may read the streams (a front end on its own dev server)."""
MAX_COUNT = 100_000_000


async def ticks() -> AsyncIterator[dict[str, int]]:
    n = 0
    while True:
        yield {"tick": n}
        n += 1
        await asyncio.sleep(0.5)


async def tick_events(request: web.Request) -> web.StreamResponse:
    return await sse_response(request, ticks(), event="tick", id=lambda t: t["tick"], retry=3.0)


async def relay(request: web.Request) -> web.StreamResponse:
    """Someone else's event stream, transformed and re-served; one upstream per client."""
    upstream = sse_client(f"http://127.0.0.1:{PORT}/ticks")
    doubled = upstream.map(lambda event: {"double": 2 * json.loads(event.data)["tick"]})
    return await sse_response(request, doubled)


async def numbers(request: web.Request) -> web.StreamResponse:
    try:
        count = int(request.query.get("count", "1000000"))
    except ValueError:
        count = -1
    if not 0 <= count <= MAX_COUNT:
        # Checked before the response starts: a 400 now, not a 500 or a broken stream later.
        raise web.HTTPBadRequest(text=f"count must be a whole number from 0 to {MAX_COUNT}")
    return await ndjson_response(
        request, Flux.range(0, count).map(lambda i: {"n": i, "square": i * i})
    )


async def upload(request: web.Request) -> web.Response:
    sizes = await request_body_publisher(request).map(len).to_list()
    return web.json_response({"chunks": len(sizes), "bytes": sum(sizes)})


async def echo(request: web.Request) -> web.WebSocketResponse:
    ws = web.WebSocketResponse()
    await ws.prepare(request)
    await websocket_send(ws, websocket_publisher(ws).map(str.upper))
    return ws


async def allow_origin(request: web.Request, response: web.StreamResponse) -> None:
    """CORS without aiohttp_cors: runs before the headers go out, streaming responses too."""
    origin = request.headers.get("Origin")
    if origin in ALLOWED_ORIGINS:
        response.headers["Access-Control-Allow-Origin"] = origin
        response.headers["Vary"] = "Origin"


async def preflight(request: web.Request) -> web.Response:
    """The browser's OPTIONS before a request it may not send without asking."""
    return web.Response(
        status=204,
        headers={
            "Access-Control-Allow-Methods": "GET, POST",
            "Access-Control-Allow-Headers": "Last-Event-ID, Content-Type",
            "Access-Control-Max-Age": "600",
        },
    )


def make_app() -> web.Application:
    app = web.Application()
    app.on_response_prepare.append(allow_origin)
    app.router.add_route("OPTIONS", "/{path:.*}", preflight)
    app.router.add_get("/ticks", tick_events)
    app.router.add_get("/relay", relay)
    app.router.add_get("/numbers.ndjson", numbers)
    app.router.add_post("/upload", upload)
    app.router.add_get("/echo", echo)
    return app


if __name__ == "__main__":
    web.run_app(make_app(), host="127.0.0.1", port=PORT)
