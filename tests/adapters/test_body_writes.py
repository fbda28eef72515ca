"""How the response bodies of both frameworks write: a slow source's lines go out at
once (no wait to fill a batch), a fast source's short lines in large writes, a client that
leaves cancels the source, and the writer asks for no more than its window ahead while the
next batch comes during a write."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
pytest.importorskip("aiohttp")

import aiohttp
import attrs
from aiohttp import web
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from reactive_aio import Flux, Publisher, Subscriber, Subscription
from reactive_aio.adapters import aiohttp as aiohttp_adapter, starlette as starlette_adapter
from reactive_aio.adapters._pull import DEFAULT_WINDOW, WRITE_BYTES

from ._support import aiohttp_server, small_buffer_session, uvicorn_server, wait_for

pytestmark = pytest.mark.web

PROMPT_S = 0.1
"""The most a line may take from the source to the client: a write that waited for a batch
to fill (or for the source's next item) would take the source's pause."""


class Serve(Protocol):
    """A server whose every response is ``ndjson_response(make(), window=window)``."""

    def __call__(
        self, make: Callable[[], Publisher[Any]], window: int = ...
    ) -> AbstractAsyncContextManager[str]: ...


@contextlib.asynccontextmanager
async def starlette_ndjson(
    make: Callable[[], Publisher[Any]], window: int = DEFAULT_WINDOW
) -> AsyncIterator[str]:
    async def respond(request: Request) -> Response:
        return starlette_adapter.ndjson_response(make(), window=window)

    async with uvicorn_server(Starlette(routes=[Route("/", respond)])) as url:
        yield url


@contextlib.asynccontextmanager
async def aiohttp_ndjson(
    make: Callable[[], Publisher[Any]], window: int = DEFAULT_WINDOW
) -> AsyncIterator[str]:
    async def respond(request: web.Request) -> web.StreamResponse:
        return await aiohttp_adapter.ndjson_response(request, make(), window=window)

    app = web.Application()
    app.router.add_get("/", respond)
    async with aiohttp_server(app) as url:
        yield url


SERVERS: dict[str, Serve] = {"starlette": starlette_ndjson, "aiohttp": aiohttp_ndjson}
HELD = {"starlette": 3, "aiohttp": 2}
"""Windows of lines a response holds at most: the chunk being written and the window requested
while it is; uvicorn's ``send`` returns once a chunk is in the transport's buffer and waits for
the drain before the next one, so its transport holds one chunk more."""


PAUSE_S = 0.3
"""A slow source's pause between lines: longer than `PROMPT_S`, so a line held back until the
next one came would arrive late."""


@pytest.mark.parametrize("server", SERVERS)
async def test_a_slow_sources_lines_reach_the_client_at_once(server: str) -> None:
    loop = asyncio.get_running_loop()
    emitted: list[float] = []
    finished = asyncio.Event()

    async def slow() -> AsyncIterator[dict[str, int]]:
        try:
            for i in range(3):
                emitted.append(loop.time())
                yield {"i": i}
                # Pauses between lines, then one long enough that nothing more comes.
                await asyncio.sleep(PAUSE_S if i < 2 else 10)
            yield {"i": 3}
        finally:
            finished.set()

    async with SERVERS[server](lambda: Flux.from_async_iterable(slow())) as url:
        async with aiohttp.ClientSession() as session, session.get(url) as response:
            # Each line on its own, the first and those after a write that topped the window
            # up ahead alike: none waits for a batch to fill.
            for i in range(3):
                line = await response.content.readline()
                arrived = loop.time()
                assert json.loads(line) == {"i": i}
                assert arrived - emitted[i] < PROMPT_S
        # The client left mid-pause: the source is cancelled, not left sleeping.
        async with asyncio.timeout(5):
            await finished.wait()


@pytest.mark.parametrize("server", SERVERS)
async def test_a_fast_sources_short_lines_go_out_in_writes_of_write_bytes(server: str) -> None:
    # Lines of ~13 bytes: a window of them makes ~3 KiB, and a write costs the same whatever
    # it carries, so the writer gathers the windows a synchronous source refills at once.
    n = 20_000
    chunks: list[int] = []
    size = 0
    async with (
        SERVERS[server](lambda: Flux.range(0, n).map(lambda i: {"i": i})) as url,
        aiohttp.ClientSession() as session,
        session.get(url) as response,
    ):
        async for data, end_of_chunk in response.content.iter_chunks():
            size += len(data)
            if end_of_chunk:  # one HTTP chunk per write of the adapter
                chunks.append(size)
                size = 0
    body = sum(len(json.dumps({"i": i}, separators=(",", ":"))) + 1 for i in range(n))
    assert sum(chunks) + size == body
    assert len(chunks) >= 2
    batch_bytes = DEFAULT_WINDOW * len('{"i":19999}\n')
    for chunk in chunks[:-1]:
        assert WRITE_BYTES <= chunk < WRITE_BYTES + batch_bytes


PAD = "x" * (64 * 1024)
"""Large lines, so that the socket buffers between the writer and the client hold few."""
SLACK = 24
"""Lines in transit that do not break the bound: the kernel's send and receive buffers (64 KiB
asked on each side, doubled by Linux), the server's write buffer and the client's read buffer
(64 KiB-ish each), with room to spare."""


@attrs.define(eq=False)
class Counting(Publisher[dict[str, str]]):
    """An endless source that counts what is requested of it and answers each request on the
    spot: what it emitted is what was requested."""

    requested: int = 0
    cancelled: bool = False

    def subscribe(self, subscriber: Subscriber[dict[str, str]]) -> None:
        subscriber.on_subscribe(_CountingSubscription(self, subscriber))


@attrs.define(eq=False)
class _CountingSubscription(Subscription):
    source: Counting
    subscriber: Subscriber[dict[str, str]]
    emitting: bool = False
    owed: int = 0

    def request(self, n: int) -> None:
        source = self.source
        source.requested += n
        self.owed += n
        if self.emitting:  # a request from inside on_next: the loop below serves it
            return
        self.emitting = True
        while self.owed and not source.cancelled:
            self.owed -= 1
            self.subscriber.on_next({"pad": PAD})
        self.emitting = False

    def cancel(self) -> None:
        self.source.cancelled = True


@pytest.mark.parametrize("window", [DEFAULT_WINDOW, 8])
@pytest.mark.parametrize("server", SERVERS)
async def test_the_writer_asks_for_at_most_a_window_ahead_of_a_slow_client(
    server: str, window: int
) -> None:
    source = Counting()
    held = HELD[server] * window
    async with SERVERS[server](lambda: source, window) as url:
        async with small_buffer_session() as session, session.get(url) as response:
            lines = 0
            while lines < 2 * held:  # well past the first windows
                await response.content.readline()
                lines += 1
                # The line being written, the window requested while it is, and what the
                # buffers on the way hold: never more, whatever the source could give.
                assert source.requested <= lines + held + SLACK
                await asyncio.sleep(0.001)  # a slow reader, not synchronisation
        await wait_for(lambda: source.cancelled)
