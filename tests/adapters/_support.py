"""Shared by the adapter tests: real servers on free ports, an observable endless source."""

from __future__ import annotations

import asyncio
import itertools
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, final

import attrs

from reactive_aio import Flux, Publisher, Subscriber
from reactive_aio._core import DrainSubscription

if TYPE_CHECKING:
    import aiohttp

SMALL_BUFFER = 64 * 1024
"""Socket buffer size asked of the kernel on both ends, so it holds few large items."""


def listening_socket() -> socket.socket:
    """A TCP socket bound to a free port on 127.0.0.1, with a small send buffer."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SMALL_BUFFER)  # inherited on accept
    sock.bind(("127.0.0.1", 0))
    sock.listen(256)
    sock.setblocking(False)
    return sock


@asynccontextmanager
async def uvicorn_server(app: Any) -> AsyncIterator[str]:
    """Serve the ASGI *app* with uvicorn in this loop; yields the base URL."""
    import uvicorn

    sock = listening_socket()
    config = uvicorn.Config(
        app,
        lifespan="off",
        log_level="warning",
        ws="websockets-sansio",
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:
            if task.done():
                task.result()
            await asyncio.sleep(0.01)
        host, port = sock.getsockname()
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        await task
        sock.close()


@asynccontextmanager
async def aiohttp_server(app: Any) -> AsyncIterator[str]:
    """Serve the aiohttp *app* with ``AppRunner`` + ``SockSite``; yields the base URL."""
    from aiohttp import web

    sock = listening_socket()
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.SockSite(runner, sock)
    await site.start()
    host, port = sock.getsockname()
    try:
        yield f"http://{host}:{port}"
    finally:
        await runner.cleanup()
        sock.close()


def _small_socket(addr_info: Any) -> socket.socket:
    family, kind, proto = addr_info[:3]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SMALL_BUFFER)
    return sock


def small_buffer_session() -> aiohttp.ClientSession:
    """An ``aiohttp.ClientSession`` whose sockets ask the kernel for a small receive buffer."""
    import aiohttp

    connector = aiohttp.TCPConnector(limit=200, socket_factory=_small_socket)
    return aiohttp.ClientSession(connector=connector)


@final
@attrs.define(eq=False)
class Probe:
    """Counts what an endless source produced and which subscriptions are still live."""

    produced: int = 0
    subscribed: int = 0
    cancelled: int = 0
    cancelled_at: list[float] = attrs.field(factory=list)

    @property
    def live(self) -> int:
        return self.subscribed - self.cancelled

    def endless(self, make: Callable[[int], Any]) -> Flux[Any]:
        """An endless cold source of ``make(i)`` that reports to this probe."""
        return Flux.from_publisher(_Endless(self, make))


@final
@attrs.frozen
class _Endless(Publisher[Any]):
    probe: Probe
    make: Callable[[int], Any]

    def subscribe(self, subscriber: Subscriber[Any]) -> None:
        self.probe.subscribed += 1
        _EndlessSubscription(subscriber, self.probe, self.make).start()


@final
@attrs.define(eq=False)
class _EndlessSubscription(DrainSubscription[Any]):
    probe: Probe
    make: Callable[[int], Any]
    counter: itertools.count[int] = attrs.field(factory=itertools.count, init=False)

    def _emit(self, limit: int) -> int:
        downstream = self._downstream
        assert downstream is not None
        for emitted in range(limit):
            if self._done:
                return emitted
            self.probe.produced += 1
            downstream.on_next(self.make(next(self.counter)))
        return limit

    def _release(self) -> None:
        self.probe.cancelled += 1
        self.probe.cancelled_at.append(asyncio.get_running_loop().time())


async def wait_for(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    """Wait (polling the loop) until *condition* holds; fail after *timeout* seconds."""
    async with asyncio.timeout(timeout):
        while True:
            if condition():
                return
            await asyncio.sleep(0.005)
