"""A FastAPI service streaming with reactive_aio: ``python examples/fastapi_app.py``.

Starts uvicorn on http://127.0.0.1:8000. Try:

* ``curl -N http://127.0.0.1:8000/ticks``          server-sent events, one per 0.5 s
* ``curl -N http://127.0.0.1:8000/numbers.ndjson`` a large NDJSON stream paced by the client
* ``curl --data-binary @big.bin http://127.0.0.1:8000/upload`` a body read only as fast as it is used
* a websocket client on ws://127.0.0.1:8000/echo   upper-cases what you send

Stop the client and the work upstream stops with it: the socket is the demand.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from fastapi import FastAPI, Request, WebSocket
from starlette.responses import Response

from reactive_aio import Flux
from reactive_aio.adapters.starlette import (
    ndjson_response,
    request_body_publisher,
    sse_response,
    websocket_publisher,
    websocket_send,
)

app = FastAPI(title="reactive_aio example")


async def ticks() -> AsyncIterator[dict[str, int]]:
    n = 0
    while True:
        yield {"tick": n}
        n += 1
        await asyncio.sleep(0.5)


@app.get("/ticks")
async def tick_events() -> Response:
    """Server-sent events with ids, a retry hint and keep-alive comments."""
    return sse_response(
        Flux.from_async_iterable(ticks()), event="tick", id=lambda t: t["tick"], retry=3.0
    )


@app.get("/numbers.ndjson")
async def numbers(count: int = 1_000_000) -> Response:
    """Produced only as fast as the client reads."""
    return ndjson_response(Flux.range(0, count).map(lambda i: {"n": i, "square": i * i}))


@app.post("/upload")
async def upload(request: Request) -> dict[str, int]:
    """Counts the bytes of a streamed upload without holding it in memory."""
    sizes = await request_body_publisher(request).map(len).to_list()
    return {"chunks": len(sizes), "bytes": sum(sizes)}


@app.websocket("/echo")
async def echo(websocket: WebSocket) -> None:
    """Reads a message only when the previous answer was sent."""
    await websocket.accept()
    await websocket_send(websocket, websocket_publisher(websocket).map(str.upper))


if __name__ == "__main__":
    import uvicorn

    uvicorn.run(app, host="127.0.0.1", port=8000)
