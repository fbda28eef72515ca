"""An aiohttp service streaming with reactive_aio: ``python examples/aiohttp_app.py``.

Starts aiohttp on http://127.0.0.1:8080. Try:

* ``curl -N http://127.0.0.1:8080/ticks``          server-sent events, one per 0.5 s
* ``curl -N http://127.0.0.1:8080/numbers.ndjson`` a large NDJSON stream paced by the client
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


async def ticks() -> AsyncIterator[dict[str, int]]:
    n = 0
    while True:
        yield {"tick": n}
        n += 1
        await asyncio.sleep(0.5)


async def tick_events(request: web.Request) -> web.StreamResponse:
    return await sse_response(
        request, Flux.from_async_iterable(ticks()), event="tick", id=lambda t: t["tick"], retry=3.0
    )


async def relay(request: web.Request) -> web.StreamResponse:
    """Someone else's event stream, transformed and re-served; one upstream per client."""
    upstream = sse_client(f"http://127.0.0.1:{PORT}/ticks")
    doubled = upstream.map(lambda event: {"double": 2 * json.loads(event.data)["tick"]})
    return await sse_response(request, doubled)


async def numbers(request: web.Request) -> web.StreamResponse:
    count = int(request.query.get("count", "1000000"))
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


def make_app() -> web.Application:
    app = web.Application()
    app.router.add_get("/ticks", tick_events)
    app.router.add_get("/relay", relay)
    app.router.add_get("/numbers.ndjson", numbers)
    app.router.add_post("/upload", upload)
    app.router.add_get("/echo", echo)
    return app


if __name__ == "__main__":
    web.run_app(make_app(), host="127.0.0.1", port=PORT)
