"""A FastAPI service streaming with reactive_aio: ``python examples/fastapi_app.py``.

Run it in the venv that ``scripts/setup`` made (``. .venv/bin/activate`` first, or
``.venv/bin/python examples/fastapi_app.py``). It starts uvicorn on http://127.0.0.1:8000. Try:

* http://127.0.0.1:8000/ in a browser: a page that shows the server-sent events as they arrive
* ``curl -N http://127.0.0.1:8000/ticks``          server-sent events, one per 0.5 s
* ``curl -N 'http://127.0.0.1:8000/numbers.ndjson?count=5'`` NDJSON paced by the client
* ``curl --data-binary @big.bin http://127.0.0.1:8000/upload`` a body read only as fast as it is used
* a websocket client on ws://127.0.0.1:8000/echo   upper-cases what you send
* http://127.0.0.1:8000/docs: the OpenAPI page, /ticks documented as ``text/event-stream``

Stop the client and the work upstream stops with it: the socket is the demand.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import FastAPI, Header, Query, Request, WebSocket
from fastapi.middleware.cors import CORSMiddleware
from starlette.responses import HTMLResponse, Response

from reactive_aio import Flux
from reactive_aio.adapters.starlette import (
    ndjson_response,
    request_body_publisher,
    sse_response,
    websocket_publisher,
    websocket_send,
)

ALLOWED_ORIGINS = ["http://localhost:3000"]
"""Pages served from these origins may read the streams (a front end on its own dev server)."""

app = FastAPI(title="reactive_aio example")
app.add_middleware(
    CORSMiddleware,
    allow_origins=ALLOWED_ORIGINS,
    allow_methods=["GET", "POST"],
    allow_headers=["Last-Event-ID"],  # EventSource sends it when it reconnects
)


class EventStream(Response):
    """Only for the OpenAPI document: tells FastAPI what /ticks answers with."""

    media_type = "text/event-stream"


async def ticks(start: int, every: float) -> AsyncIterator[dict[str, int]]:
    n = start
    while True:
        yield {"tick": n}
        n += 1
        await asyncio.sleep(every)


@app.get("/ticks", response_class=EventStream)
async def tick_events(
    every: Annotated[float, Query(gt=0, le=60, description="seconds between ticks")] = 0.5,
    last_event_id: Annotated[int | None, Header(ge=0)] = None,
) -> Response:
    """Server-sent events with ids, a retry hint and keep-alive comments.

    A client that reconnects sends the last id it saw and resumes after it.
    """
    start = 0 if last_event_id is None else last_event_id + 1
    return sse_response(ticks(start, every), event="tick", id=lambda t: t["tick"], retry=3.0)


PAGE = """<!doctype html>
<meta charset="utf-8">
<title>reactive_aio ticks</title>
<p id="status">connecting…</p>
<ol id="ticks"></ol>
<script>
  const status = document.getElementById("status");
  const list = document.getElementById("ticks");
  const source = new EventSource("/ticks" + location.search);  // /?every=0.1 passes it on
  source.onopen = () => { status.textContent = "open"; };
  source.onerror = () => { status.textContent = "reconnecting…"; };  // EventSource retries
  source.addEventListener("tick", (event) => {
    const item = document.createElement("li");
    item.textContent = JSON.parse(event.data).tick + " (id " + event.lastEventId + ")";
    list.append(item);
  });
</script>
"""


@app.get("/", response_class=HTMLResponse)
async def page() -> str:
    """A page that opens an EventSource on /ticks and lists the events as they arrive."""
    return PAGE


@app.get("/numbers.ndjson")
async def numbers(count: Annotated[int, Query(ge=0, le=100_000_000)] = 1_000_000) -> Response:
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
