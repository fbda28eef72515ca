"""SSE: events per second through `sse_response` against a hand-written async-generator
``StreamingResponse``, both served by a real uvicorn on 127.0.0.1 and read by httpx.

Run: ``python -m benchmarks.bench_sse [--n N] [--reps R] [--quick]``. The server runs in a
thread with its own event loop, the client in the main thread; the workloads alternate
within one run and the median of each is reported with their ratio (ours / theirs, higher is
better), plus ``sse_response(window=16)`` to show what a prefetch window buys. One JSON line
is printed; `run` returns the same dict for the benchmark harness.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import threading
import time
from collections.abc import AsyncIterator
from typing import Any, Self

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from reactive_aio import Flux
from reactive_aio.adapters.starlette import sse_response


def _app() -> Starlette:
    def count(request: Request) -> int:
        return int(request.query_params["n"])

    async def ours(request: Request) -> Response:
        window = int(request.query_params.get("window", "1"))
        events = Flux.range(0, count(request)).map(lambda i: {"i": i})
        return sse_response(events, keep_alive=None, window=window)

    async def theirs(request: Request) -> Response:
        n = count(request)

        async def events() -> AsyncIterator[str]:
            for i in range(n):
                yield f"data: {json.dumps({'i': i}, separators=(',', ':'))}\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    return Starlette(routes=[Route("/ours", ours), Route("/theirs", theirs)])


class _Server:
    """uvicorn in a thread of its own, on a free port."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.url = "http://{}:{}".format(*self.sock.getsockname())
        config = uvicorn.Config(_app(), lifespan="off", log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        asyncio.run(self.server.serve(sockets=[self.sock]))

    def __enter__(self) -> Self:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()


async def _events_per_second(client: httpx.AsyncClient, url: str, n: int) -> float:
    start = time.perf_counter()
    seen = 0
    tail = b""
    async with client.stream("GET", url, params={"n": n}) as response:
        async for chunk in response.aiter_raw():
            data = tail + chunk
            seen += data.count(b"\n\n")
            tail = data[-1:]
    elapsed = time.perf_counter() - start
    if seen != n:
        raise RuntimeError(f"expected {n} events from {url}, got {seen}")
    return n / elapsed


async def _run(base: str, n: int, reps: int) -> dict[str, Any]:
    rates: dict[str, list[float]] = {"ours": [], "ours_window16": [], "theirs": []}
    urls = {
        "ours": f"{base}/ours",
        "ours_window16": f"{base}/ours?window=16",
        "theirs": f"{base}/theirs",
    }
    async with httpx.AsyncClient(timeout=60) as client:
        for url in urls.values():  # warm-up
            await _events_per_second(client, url, max(n // 10, 10))
        for _ in range(reps):
            for name, url in urls.items():
                rates[name].append(await _events_per_second(client, url, n))
    ours = statistics.median(rates["ours"])
    windowed = statistics.median(rates["ours_window16"])
    theirs = statistics.median(rates["theirs"])
    return {
        "workload": "sse",
        "n": n,
        "reps": reps,
        "sse_response_events_per_s": round(ours),
        "sse_response_window16_events_per_s": round(windowed),
        "async_generator_events_per_s": round(theirs),
        "ratio": round(ours / theirs, 3),
        "ratio_window16": round(windowed / theirs, 3),
    }


def run(quick: bool) -> dict[str, Any]:
    """Measure both and return the result; *quick* uses a tiny run (a smoke test)."""
    n, reps = (2_000, 1) if quick else (50_000, 3)
    with _Server() as server:
        return asyncio.run(_run(server.url, n, reps))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=50_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        print(json.dumps(run(quick=True)))
        return
    with _Server() as server:
        print(json.dumps(asyncio.run(_run(server.url, args.n, args.reps))))


if __name__ == "__main__":
    main()
