"""aiohttp: stream a publisher as a response, SSE or websocket; read request bodies; consume
someone else's server-sent events with `sse_client`.

Every function that streams takes a publisher (a `Flux` too), an async iterable or an async
generator (read through `Flux.from_async_iterable`, so a one-shot one serves one response);
anything else raises `TypeError` naming the argument when the response is built.

Backpressure: full; a response body holds at most ``window`` items (256 by default, 1 for a
websocket) requested ahead of the chunk being written. Whenever the writer is free it writes
all it holds in one ``await response.write(...)``, with what a source that delivers on
request refills at once (up to about 64 KiB; never waiting to fill one), and tops the
window up as soon as it suspends, so the next batch arrives while the write waits for the
transport to drain: a slow client slows the source down. A websocket asks for the next
message only after the previous one drained. `sse_client` and
`request_body_publisher` read from the socket only as items are requested.
Errors: an upstream error is logged to the ``reactive_aio`` logger; a streaming body is then
aborted (the connection closes without the final chunk, so the client sees an incomplete
body), an SSE stream ends with an ``event: error``, a websocket closes with code 1011.
Loop: a response checks its transport every `DISCONNECT_POLL` seconds in a task of its own;
a client that goes away cancels the upstream subscription then, or at the first write that
fails, whichever comes first.

Needs the ``web`` extra: ``pip install 'reactive_aio[web]'``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, Literal, TypeVar

try:
    import aiohttp
    from aiohttp import web
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "reactive_aio.adapters.aiohttp needs aiohttp: pip install 'reactive_aio[web]'"
    ) from exc

from .._core import Publisher
from .._flux import Flux
from ._body import body_encoder, joined, stream_source
from ._pull import DEFAULT_WINDOW, PullSubscriber, first, pull, write_all
from ._sse import (
    KEEP_ALIVE,
    ServerSentEvent,
    SSEEncoder,
    SSEParser,
    encode_error,
    encode_json_lines,
)

__all__ = (
    "DISCONNECT_POLL",
    "ServerSentEvent",
    "ndjson_response",
    "request_body_publisher",
    "sse_client",
    "sse_response",
    "stream_response",
    "websocket_publisher",
    "websocket_send",
)

T = TypeVar("T")

WebSocketMode = Literal["text", "bytes", "json"]

DISCONNECT_POLL = 0.1
"""Seconds between checks of a streaming response's transport while it waits for items."""


def _transport_gone(request: web.BaseRequest) -> bool:
    transport = request.transport
    return transport is None or transport.is_closing()


async def _watch_transport(request: web.BaseRequest, subscriber: PullSubscriber[Any]) -> None:
    # aiohttp has no disconnect event for a handler (unless handler_cancellation is on, which
    # cancels the handler and so the subscription too): poll the transport.
    while True:
        if _transport_gone(request):
            subscriber.cancel()
            return
        await asyncio.sleep(DISCONNECT_POLL)


async def _stream(
    request: web.BaseRequest,
    response: web.StreamResponse,
    publisher: Publisher[T],
    encode: Callable[[list[T]], bytes],
    *,
    window: int,
    preamble: bytes = b"",
    on_error: Callable[[BaseException], bytes] | None = None,
    keep_alive: float | None = None,
) -> web.StreamResponse:
    await response.prepare(request)
    subscriber = pull(publisher, window=window)
    watcher = asyncio.ensure_future(_watch_transport(request, subscriber))
    try:
        if preamble:
            await response.write(preamble)
        error = await write_all(
            subscriber,
            encode,
            response.write,
            batch=window,
            idle=KEEP_ALIVE,
            idle_after=keep_alive,
            what=f"streaming {request.path}",
        )
        if _transport_gone(request):
            return response
        if error is not None:
            if on_error is None:
                transport = request.transport
                if transport is not None:
                    transport.close()  # no final chunk: the client sees an incomplete body
                return response
            await response.write(on_error(error))
        await response.write_eof()
    except ConnectionError:
        pass  # the client went away while we wrote; the subscription is cancelled
    finally:
        subscriber.cancel()
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher
    return response


async def stream_response(
    request: web.BaseRequest,
    publisher: Publisher[T] | AsyncIterable[T],
    *,
    content_type: str = "application/octet-stream",
    encode: Callable[[T], bytes | str] | None = None,
    status: int = 200,
    headers: Mapping[str, str] | None = None,
    window: int = DEFAULT_WINDOW,
) -> web.StreamResponse:
    """Send a chunked response with one chunk per item and return it (when it is finished).

    Use it as the handler's return value: ``return await stream_response(request, flux)``.

    Args:
        request: the request being answered.
        publisher: items of ``bytes`` or ``str`` (UTF-8), or anything *encode* turns into them.
        content_type: the ``Content-Type``.
        encode: one item to ``bytes`` or ``str``; a raising *encode* fails the stream.
        status: the status.
        headers: extra headers.
        window: items requested ahead of the writer.

    Backpressure: full; at most *window* items requested ahead of the chunk being written.
    Errors: the body is aborted (the client sees an incomplete chunked body).
    """
    source = stream_source(publisher, "stream_response")
    response = web.StreamResponse(status=status, headers=headers)
    response.content_type = content_type
    convert = body_encoder(encode, "stream_response")
    return await _stream(request, response, source, convert, window=window)


async def ndjson_response(
    request: web.BaseRequest,
    publisher: Publisher[T] | AsyncIterable[T],
    *,
    status: int = 200,
    headers: Mapping[str, str] | None = None,
    window: int = DEFAULT_WINDOW,
) -> web.StreamResponse:
    """Newline-delimited JSON (``application/x-ndjson``): one compact JSON document per line."""
    source = stream_source(publisher, "ndjson_response")
    response = web.StreamResponse(status=status, headers=headers)
    response.content_type = "application/x-ndjson"
    return await _stream(request, response, source, encode_json_lines, window=window)


async def sse_response(
    request: web.BaseRequest,
    publisher: Publisher[T] | AsyncIterable[T],
    *,
    event: str | Callable[[T], str | None] | None = None,
    id: Callable[[T], object] | None = None,
    retry: float | None = None,
    keep_alive: float | None = 15.0,
    encode: Callable[[T], str] | None = None,
    headers: Mapping[str, str] | None = None,
    window: int = DEFAULT_WINDOW,
) -> web.StreamResponse:
    """Server-sent events (``text/event-stream``), one event per item.

    Args:
        request: the request being answered.
        publisher: the items; a `ServerSentEvent` item is sent as it is.
        event: the event type, fixed or computed per item.
        id: computes each event's id (clients resume with ``Last-Event-ID``).
        retry: the reconnection delay to ask clients for, in seconds.
        keep_alive: seconds without an event after which a comment line is sent.
        encode: an item's data; default: a ``str`` as it is, anything else as JSON.
        headers: extra headers.
        window: items requested ahead of the writer.

    Backpressure: full; at most *window* items requested ahead of the events being written.
    Errors: an ``event: error`` whose data names the error, then a clean end.
    """
    source = stream_source(publisher, "sse_response")
    response = web.StreamResponse(
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no", **(headers or {})}
    )
    response.content_type = "text/event-stream"
    return await _stream(
        request,
        response,
        source,
        joined(SSEEncoder[T](encode, event, id)),
        window=window,
        preamble=b"" if retry is None else f"retry: {round(retry * 1000)}\n\n".encode(),
        on_error=encode_error,
        keep_alive=keep_alive,
    )


async def websocket_send(
    websocket: web.WebSocketResponse,
    publisher: Publisher[T] | AsyncIterable[T],
    *,
    mode: WebSocketMode = "text",
    close: bool = True,
    window: int = 1,
) -> None:
    """Send every item as one websocket message, the next only after the previous drained.

    The websocket must be prepared. Returns when the stream ends or the client goes away
    (which cancels the upstream subscription).

    Args:
        websocket: a prepared ``WebSocketResponse``.
        publisher: the items: ``str`` for ``"text"``, ``bytes`` for ``"bytes"``, anything
            JSON-serialisable for ``"json"``.
        mode: how to send each item.
        close: close the websocket (code 1000) when the stream completes.
        window: items requested ahead of the writer.

    Errors: the websocket is closed with code 1011 and the error is logged.
    """
    source = stream_source(publisher, "websocket_send")
    send: Callable[[Any], Awaitable[None]]
    if mode == "text":
        send = websocket.send_str
    elif mode == "bytes":
        send = websocket.send_bytes
    else:
        send = websocket.send_json
    subscriber = pull(source, window=window)
    try:
        error = await write_all(subscriber, first, send, what="websocket_send")
        if error is not None:
            await websocket.close(code=1011, message=type(error).__name__.encode())
        elif close:
            await websocket.close()
    except ConnectionError:
        pass  # the client left; write_all cancelled the subscription


async def _messages(websocket: web.WebSocketResponse, mode: WebSocketMode) -> AsyncIterator[Any]:
    async for message in websocket:
        if message.type is aiohttp.WSMsgType.TEXT:
            yield json.loads(message.data) if mode == "json" else message.data
        elif message.type is aiohttp.WSMsgType.BINARY:
            yield message.data
        elif message.type is aiohttp.WSMsgType.ERROR:
            raise message.data


def websocket_publisher(
    websocket: web.WebSocketResponse, *, mode: WebSocketMode = "text"
) -> Flux[Any]:
    """The messages of a prepared websocket, read only as demand allows.

    Completes when the client closes. Subscribe once: the messages are read from the socket.

    Backpressure: full; a message is read only when one is requested.
    """
    return Flux.from_async_iterable(_messages(websocket, mode))


def request_body_publisher(request: web.BaseRequest, *, chunk_size: int = 65536) -> Flux[bytes]:
    """The request body in chunks of at most *chunk_size*, read only as demand allows.

    Subscribe once: the body can be read only once.
    """
    return Flux.from_async_iterable(request.content.iter_chunked(chunk_size))


def sse_client(
    url: str,
    *,
    session: aiohttp.ClientSession | None = None,
    headers: Mapping[str, str] | None = None,
    last_event_id: str | None = None,
) -> Flux[ServerSentEvent]:
    """The events of a remote ``text/event-stream``, parsed as they arrive.

    Each subscriber opens its own request (with its own session unless *session* is given)
    and cancelling closes it. It does not reconnect by itself: resubscribe with the last
    event's id as *last_event_id* to resume.

    Args:
        url: the event stream.
        session: a session to use; by default one is created and closed per subscription.
        headers: extra request headers.
        last_event_id: sent as ``Last-Event-ID``.

    Backpressure: full; the response is read only as events are requested, so an unread
    stream pushes back on the server through TCP.
    Errors: a non-2xx status fails the stream with ``aiohttp.ClientResponseError``; a broken
    connection with the client's error.
    """
    request_headers = {"Accept": "text/event-stream", "Cache-Control": "no-cache"}
    if last_event_id is not None:
        request_headers["Last-Event-ID"] = last_event_id
    request_headers.update(headers or {})

    async def events() -> AsyncIterator[ServerSentEvent]:
        own = session is None
        client = (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None))
            if session is None
            else session
        )
        try:
            async with client.get(url, headers=request_headers) as response:
                response.raise_for_status()
                parser = SSEParser()
                async for chunk in response.content.iter_any():
                    for event in parser.feed(chunk):
                        yield event
        finally:
            if own:
                await client.close()

    return Flux.defer(lambda: Flux.from_async_iterable(events()))
