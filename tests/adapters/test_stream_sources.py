"""What the web adapters accept as the stream of a response: a `Flux`, any other publisher, an
async iterable and an async generator, each served by a real uvicorn and a real aiohttp server;
anything else is refused with a `TypeError` when the handler builds the response."""

from __future__ import annotations

import json
from collections.abc import AsyncIterable, AsyncIterator, Callable
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
pytest.importorskip("aiohttp")
pytest.importorskip("websockets")

import aiohttp
import websockets
from aiohttp import web
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket

from reactive_aio import Flux, Publisher, Subscriber
from reactive_aio.adapters import aiohttp as aiohttp_adapter, starlette as starlette_adapter
from reactive_aio.adapters._sse import SSEParser

from ._support import aiohttp_server, uvicorn_server

pytestmark = pytest.mark.web

WORDS = ("one", "two", "three")


class Foreign:
    """A publisher that is not a `Flux`: the adapters take it as it is."""

    def subscribe(self, subscriber: Subscriber[str]) -> None:
        Flux.just(*WORDS).subscribe(subscriber)


class Words:
    """An async iterable whose ``__aiter__`` starts afresh: readable by every response."""

    def __aiter__(self) -> AsyncIterator[str]:
        return words()


async def words() -> AsyncIterator[str]:
    for word in WORDS:
        yield word


Source = Publisher[str] | AsyncIterable[str]
KINDS: dict[str, Callable[[], Source]] = {
    "flux": lambda: Flux.just(*WORDS),
    "publisher": Foreign,
    "async-iterable": Words,
    "async-generator": words,
}
REJECTED: dict[str, tuple[Any, str]] = {
    "list": (list(WORDS), "wrap a synchronous iterable in Flux.from_iterable"),
    "async-generator-function": (words, "call it: words()"),
    "none": (None, "not NoneType None"),
}
NOT_A_STREAM: Any = list(WORDS)
"""What a handler might hand over although the annotations say otherwise."""


def _message(error: TypeError) -> str:
    return f"TypeError: {error}"


async def _check_responses(session: aiohttp.ClientSession, url: str) -> None:
    for kind in KINDS:
        async with session.get(f"{url}/{kind}/sse") as response:
            assert response.content_type == "text/event-stream"
            parser = SSEParser()
            events = list(parser.feed(await response.read()))
            assert [e.data for e in events] == list(WORDS), kind
            assert {e.event for e in events} == {"word"}, kind
        async with session.get(f"{url}/{kind}/ndjson") as response:
            lines = (await response.text()).splitlines()
            assert [json.loads(line) for line in lines] == list(WORDS), kind
        async with session.get(f"{url}/{kind}/plain") as response:
            assert await response.text() == "".join(WORDS), kind
    for kind, (_, hint) in REJECTED.items():
        async with session.get(f"{url}/rejected/{kind}") as response:
            text = await response.text()
            assert response.status == 500, text
            assert text.startswith("TypeError: sse_response's publisher argument takes"), text
            assert hint in text, text


async def test_starlette_responses_take_every_kind_of_stream_and_refuse_the_rest() -> None:
    async def respond(request: Request) -> Response:
        source = KINDS[request.path_params["kind"]]()
        form = request.path_params["form"]
        if form == "sse":
            return starlette_adapter.sse_response(source, event="word")
        if form == "ndjson":
            return starlette_adapter.ndjson_response(source)
        return starlette_adapter.streaming_response(source, media_type="text/plain")

    async def rejected(request: Request) -> Response:
        value = REJECTED[request.path_params["kind"]][0]
        try:
            return starlette_adapter.sse_response(value)
        except TypeError as error:  # raised here, in the handler, not while the body is sent
            return PlainTextResponse(_message(error), status_code=500)

    app = Starlette(
        routes=[
            Route("/rejected/{kind}", rejected),
            Route("/{kind}/{form}", respond),
        ]
    )
    async with uvicorn_server(app) as url, aiohttp.ClientSession() as session:
        await _check_responses(session, url)


async def test_aiohttp_responses_take_every_kind_of_stream_and_refuse_the_rest() -> None:
    async def respond(request: web.Request) -> web.StreamResponse:
        source = KINDS[request.match_info["kind"]]()
        form = request.match_info["form"]
        if form == "sse":
            return await aiohttp_adapter.sse_response(request, source, event="word")
        if form == "ndjson":
            return await aiohttp_adapter.ndjson_response(request, source)
        return await aiohttp_adapter.stream_response(request, source, content_type="text/plain")

    async def rejected(request: web.Request) -> web.StreamResponse:
        value = REJECTED[request.match_info["kind"]][0]
        try:
            return await aiohttp_adapter.sse_response(request, value)
        except TypeError as error:  # raised before the response is prepared
            return web.Response(text=_message(error), status=500)

    app = web.Application()
    app.router.add_get("/rejected/{kind}", rejected)
    app.router.add_get("/{kind}/{form}", respond)
    async with aiohttp_server(app) as url, aiohttp.ClientSession() as session:
        await _check_responses(session, url)


async def test_websocket_send_takes_an_async_generator_and_refuses_a_list() -> None:
    refused: list[str] = []

    async def starlette_words(websocket: WebSocket) -> None:
        await websocket.accept()
        try:
            await starlette_adapter.websocket_send(websocket, NOT_A_STREAM)
        except TypeError as error:
            refused.append(str(error))
        await starlette_adapter.websocket_send(websocket, words())

    async def aiohttp_words(request: web.Request) -> web.WebSocketResponse:
        websocket = web.WebSocketResponse()
        await websocket.prepare(request)
        try:
            await aiohttp_adapter.websocket_send(websocket, NOT_A_STREAM)
        except TypeError as error:
            refused.append(str(error))
        await aiohttp_adapter.websocket_send(websocket, words())
        return websocket

    app = web.Application()
    app.router.add_get("/ws", aiohttp_words)
    async with (
        uvicorn_server(Starlette(routes=[WebSocketRoute("/ws", starlette_words)])) as first,
        aiohttp_server(app) as second,
    ):
        for url in (first, second):
            async with websockets.connect(f"{url.replace('http', 'ws')}/ws") as ws:
                assert [message async for message in ws] == list(WORDS)
    assert len(refused) == 2
    assert all(e.startswith("websocket_send's publisher argument takes") for e in refused)
