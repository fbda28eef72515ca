"""Starlette and FastAPI: stream a publisher as a response, SSE or websocket; read requests.

Every function that streams takes a publisher (a `Flux` too), an async iterable or an async
generator (read through `Flux.from_async_iterable`, so a one-shot one serves one response);
anything else raises `TypeError` naming the argument when the response is built.

Backpressure: full; a response body holds at most ``window`` items (256 by default, 1 for a
websocket) requested ahead of the chunk being sent. Whenever the writer is free it sends all
it holds as one chunk, with what a source that delivers on request refills at once (up to
about 64 KiB; never waiting to fill one), and tops the window up as soon as it suspends, so
the next batch arrives while ``await send`` waits for the transport to drain: a slow client
slows the source down. A websocket asks for the next message only after the previous one was
sent.
Errors: an upstream error is logged to the ``reactive_aio`` logger; a streaming body is then
aborted (the connection closes without the final chunk, so the client sees an incomplete
body, never a clean end), an SSE stream ends with an ``event: error``, a websocket closes with
code 1011.
Loop: a response watches ``receive()`` for ``http.disconnect`` in a task of its own; a client
that goes away cancels the upstream subscription at once.

Needs the ``web`` extra: ``pip install 'reactive_aio[web]'``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterable, Awaitable, Callable, Mapping
from typing import Any, Generic, Literal, TypeVar, final

try:
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.types import Receive, Scope, Send
    from starlette.websockets import WebSocket, WebSocketDisconnect
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "reactive_aio.adapters.starlette needs Starlette: pip install 'reactive_aio[web]'"
    ) from exc

from .._core import Publisher
from .._flux import Flux
from ._body import body_encoder, joined, stream_source
from ._pull import DEFAULT_WINDOW, first, pull, write_all
from ._sse import KEEP_ALIVE, SSEEncoder, encode_error, encode_json_lines

__all__ = (
    "PublisherResponse",
    "ndjson_response",
    "request_body_publisher",
    "sse_response",
    "streaming_response",
    "websocket_publisher",
    "websocket_send",
)

T = TypeVar("T")

WebSocketMode = Literal["text", "bytes", "json"]


@final
class PublisherResponse(Response, Generic[T]):
    """An ASGI response whose body is a publisher's items, written as they arrive.

    The publisher is subscribed when the response is sent (so a cold publisher starts afresh
    for every request) and cancelled when the client disconnects.
    """

    def __init__(
        self,
        publisher: Publisher[T] | AsyncIterable[T],
        encode: Callable[[list[T]], bytes],
        *,
        status_code: int = 200,
        headers: Mapping[str, str] | None = None,
        media_type: str | None = None,
        window: int = DEFAULT_WINDOW,
        preamble: bytes = b"",
        on_error: Callable[[BaseException], bytes] | None = None,
        keep_alive: float | None = None,
    ) -> None:
        """Args:
        publisher: the items: a publisher, or an async iterable or async generator.
        encode: the items ready for one write (at least one, at most *window*) to one
            chunk.
        status_code, headers, media_type: as for any Starlette response.
        window: items requested ahead of the writer; what is buffered when the writer is
            free goes out as one chunk (with the batches ready at once, up to about 64 KiB),
            and the window is topped up while it is written; 1 requests after each write.
        preamble: written before the first item (an SSE ``retry:`` field).
        on_error: the last chunk to write when the stream fails; None aborts the body.
        keep_alive: seconds without an item after which `KEEP_ALIVE` is written.
        """
        self.status_code = status_code
        self.media_type = media_type
        self.background = None
        self.init_headers(headers)
        self._publisher = stream_source(publisher, "PublisherResponse")
        self._encode = encode
        self._window = window
        self._preamble = preamble
        self._on_error = on_error
        self._keep_alive = keep_alive

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        subscriber = pull(self._publisher, window=self._window)
        gone = False

        async def watch_disconnect() -> None:
            nonlocal gone
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    gone = True
                    subscriber.cancel()  # the source stops now, not at the next write
                    return

        async def write(chunk: bytes) -> None:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})

        watcher = asyncio.ensure_future(watch_disconnect())
        try:
            await send(
                {
                    "type": "http.response.start",
                    "status": self.status_code,
                    "headers": self.raw_headers,
                }
            )
            if self._preamble:
                await write(self._preamble)
            error = await write_all(
                subscriber,
                self._encode,
                write,
                batch=self._window,
                idle=KEEP_ALIVE,
                idle_after=self._keep_alive,
                what=f"streaming {scope.get('path', 'a response')}",
            )
            if gone:
                return
            if error is not None:
                if self._on_error is None:
                    return  # no final chunk: the server closes the connection mid-body
                await write(self._on_error(error))
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError:
            pass  # the client went away while we wrote (ASGI spec 2.4); upstream is cancelled
        finally:
            subscriber.cancel()
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher


def streaming_response(
    publisher: Publisher[T] | AsyncIterable[T],
    *,
    media_type: str = "application/octet-stream",
    encode: Callable[[T], bytes | str] | None = None,
    status_code: int = 200,
    headers: Mapping[str, str] | None = None,
    window: int = DEFAULT_WINDOW,
) -> PublisherResponse[T]:
    """A chunked response with one chunk per item.

    Args:
        publisher: items of ``bytes`` or ``str`` (UTF-8), or anything *encode* turns into them.
        media_type: the ``Content-Type``.
        encode: one item to ``bytes`` or ``str``; a raising *encode* fails the stream.
        status_code: the status.
        headers: extra headers.
        window: items requested ahead of the writer.

    Backpressure: full; at most *window* items requested ahead of the chunk being sent.
    Errors: the body is aborted (the client sees an incomplete chunked body).
    """
    convert = body_encoder(encode, "streaming_response")
    return PublisherResponse(
        stream_source(publisher, "streaming_response"),
        convert,
        status_code=status_code,
        headers=headers,
        media_type=media_type,
        window=window,
    )


def ndjson_response(
    publisher: Publisher[T] | AsyncIterable[T],
    *,
    status_code: int = 200,
    headers: Mapping[str, str] | None = None,
    window: int = DEFAULT_WINDOW,
) -> PublisherResponse[T]:
    """Newline-delimited JSON (``application/x-ndjson``): one compact JSON document per line."""
    return PublisherResponse(
        stream_source(publisher, "ndjson_response"),
        encode_json_lines,
        status_code=status_code,
        headers=headers,
        media_type="application/x-ndjson",
        window=window,
    )


def sse_response(
    publisher: Publisher[T] | AsyncIterable[T],
    *,
    event: str | Callable[[T], str | None] | None = None,
    id: Callable[[T], object] | None = None,
    retry: float | None = None,
    keep_alive: float | None = 15.0,
    encode: Callable[[T], str] | None = None,
    headers: Mapping[str, str] | None = None,
    window: int = DEFAULT_WINDOW,
) -> PublisherResponse[T]:
    """Server-sent events (``text/event-stream``), one event per item.

    Args:
        publisher: the items; a `ServerSentEvent` item is sent as it is.
        event: the event type, fixed or computed per item.
        id: computes each event's id (clients resume with ``Last-Event-ID``).
        retry: the reconnection delay to ask clients for, in seconds.
        keep_alive: seconds without an event after which a comment line is sent.
        encode: an item's data; default: a ``str`` as it is, anything else as JSON.
        headers: extra headers.
        window: items requested ahead of the writer.

    Backpressure: full; at most *window* items requested ahead of the events being sent.
    Errors: an ``event: error`` whose data names the error, then a clean end.
    """
    source = stream_source(publisher, "sse_response")
    all_headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    if headers is not None:
        all_headers.update(headers)
    return PublisherResponse(
        source,
        joined(SSEEncoder[T](encode, event, id)),
        headers=all_headers,
        media_type="text/event-stream",
        window=window,
        preamble=b"" if retry is None else f"retry: {round(retry * 1000)}\n\n".encode(),
        on_error=encode_error,
        keep_alive=keep_alive,
    )


async def websocket_send(
    websocket: WebSocket,
    publisher: Publisher[T] | AsyncIterable[T],
    *,
    mode: WebSocketMode = "text",
    close: bool = True,
    window: int = 1,
) -> None:
    """Send every item as one websocket message, the next only after the previous was sent.

    The websocket must be accepted. Returns when the stream ends or the client goes away
    (which cancels the upstream subscription). Incoming messages are left to whoever reads
    the websocket (`websocket_publisher`), so a vanished client is noticed by the next send
    that fails.

    Args:
        websocket: an accepted websocket.
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
        send = websocket.send_text
    elif mode == "bytes":
        send = websocket.send_bytes
    else:
        send = websocket.send_json
    subscriber = pull(source, window=window)
    try:
        error = await write_all(subscriber, first, send, what="websocket_send")
    except (WebSocketDisconnect, OSError):
        return  # the client left; write_all cancelled the subscription
    try:
        if error is not None:
            await websocket.close(code=1011, reason=type(error).__name__)
        elif close:
            await websocket.close(code=1000)
    except (WebSocketDisconnect, OSError, RuntimeError):
        pass  # already closed by the client


async def _messages(websocket: WebSocket, mode: WebSocketMode) -> Any:
    try:
        while True:
            if mode == "text":
                yield await websocket.receive_text()
            elif mode == "bytes":
                yield await websocket.receive_bytes()
            else:
                yield await websocket.receive_json()
    except WebSocketDisconnect:
        return


def websocket_publisher(websocket: WebSocket, *, mode: WebSocketMode = "text") -> Flux[Any]:
    """The messages of an accepted websocket, read only as demand allows.

    Completes when the client closes. Subscribe once: the messages are read from the socket.

    Backpressure: full; a message is read from the socket only when one is requested, so an
    unread socket pushes back on the client through TCP.
    """
    return Flux.from_async_iterable(_messages(websocket, mode))


def request_body_publisher(request: Request) -> Flux[bytes]:
    """The request body as chunks, read from the server only as demand allows.

    Subscribe once: the body can be read only once.
    """
    return Flux.from_async_iterable(request.stream()).filter(len)
