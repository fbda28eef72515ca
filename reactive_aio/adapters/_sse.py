"""The server-sent events wire format: encoding events, parsing a byte stream into events.

Pure functions and one small incremental parser; no I/O and no optional dependency, shared by
the Starlette and aiohttp adapters (servers) and `sse_client` (client).
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Generic, TypeVar, final

import attrs

__all__ = (
    "KEEP_ALIVE",
    "SSEEncoder",
    "SSEParser",
    "ServerSentEvent",
    "encode_error",
    "encode_event",
    "encode_json",
    "encode_json_lines",
)

T = TypeVar("T")

_LINE_END = re.compile(r"\r\n|\r|\n")

KEEP_ALIVE = b": keep-alive\n\n"
"""A comment line: keeps proxies from closing an idle stream; clients ignore it."""


@final
@attrs.frozen
class ServerSentEvent:
    """One event as it travels on the wire."""

    data: str
    """The payload; may span several lines."""
    event: str | None = None
    """The event type; clients treat ``None`` as ``"message"``."""
    id: str | None = None
    """The event id; a client sends the last one back as ``Last-Event-ID`` when reconnecting."""
    retry: int | None = None
    """The reconnection delay the server asks for, in milliseconds."""


def _field(name: str, value: str) -> str:
    if "\n" in value or "\r" in value:
        raise ValueError(f"SSE {name} must be a single line, got {value!r}")
    return f"{name}: {value}\n"


def encode_event(event: ServerSentEvent) -> bytes:
    """The wire form of *event*: its fields, one ``data:`` line per payload line, a blank line.

    Raises:
        ValueError: the event type or id contains a line break.
    """
    parts: list[str] = []
    if event.event is not None:
        parts.append(_field("event", event.event))
    if event.id is not None:
        parts.append(_field("id", event.id))
    if event.retry is not None:
        parts.append(f"retry: {int(event.retry)}\n")
    parts.extend(f"data: {line}\n" for line in _LINE_END.split(event.data))
    parts.append("\n")
    return "".join(parts).encode()


def encode_error(error: BaseException) -> bytes:
    """The ``event: error`` the server sends when the stream fails."""
    return encode_event(ServerSentEvent(f"{type(error).__name__}: {error}", event="error"))


encode_json: Callable[[object], str] = json.JSONEncoder(separators=(",", ":")).encode
"""Compact JSON for one item (what NDJSON and SSE payloads use by default): what
``json.dumps(item, separators=(",", ":"))`` returns, from one encoder built once (``dumps``
builds a new one per call for any non-default option)."""


def encode_json_lines(items: Sequence[object]) -> bytes:
    """NDJSON for a batch of items: one compact JSON document per line, encoded once.

    The lines are joined by ``str.join`` over ``map``: no Python frame or formatting per item
    beyond the JSON encoder's own call."""
    return ("\n".join(map(encode_json, items)) + "\n").encode()


@final
@attrs.define(eq=False)
class SSEEncoder(Generic[T]):
    """Turns the items of a stream into events: a `ServerSentEvent` goes as it is, anything
    else becomes the data of an event whose type and id come from the options."""

    _encode: Callable[[T], str] | None = None
    """Payload of an item; default: ``str`` as it is, anything else as JSON."""
    _event: str | Callable[[T], str | None] | None = None
    _id: Callable[[T], object] | None = None

    def __call__(self, item: T) -> bytes:
        if isinstance(item, ServerSentEvent):
            return encode_event(item)
        encode = self._encode
        if encode is not None:
            data = encode(item)
        else:
            data = item if isinstance(item, str) else encode_json(item)
        # The per-event hot path: format directly, without building a ServerSentEvent.
        head = ""
        kind = self._event
        if kind is not None:
            event = kind(item) if callable(kind) else kind
            if event is not None:
                head = _field("event", event)
        make_id = self._id
        if make_id is not None:
            head += _field("id", str(make_id(item)))
        if "\n" in data or "\r" in data:
            body = "".join([f"data: {line}\n" for line in _LINE_END.split(data)])
        else:
            body = f"data: {data}\n"
        return f"{head}{body}\n".encode()


@final
@attrs.define(eq=False)
class SSEParser:
    """Incremental parser of the ``text/event-stream`` format (the WHATWG algorithm).

    Feed it bytes as they arrive; it yields complete events. Handles ``\\r\\n``, ``\\r`` and
    ``\\n`` line ends, multi-line data, comments, a leading byte-order mark, ``id`` persisting
    across events and ``retry`` with digits only.
    """

    last_event_id: str | None = None
    """The id of the last event seen; send it as ``Last-Event-ID`` to resume."""
    retry: int | None = None
    """The last valid ``retry`` the server sent, in milliseconds."""
    _decoder: codecs.IncrementalDecoder = attrs.field(
        factory=lambda: codecs.getincrementaldecoder("utf-8")(errors="replace"), init=False
    )
    _pending: str = attrs.field(default="", init=False)
    _started: bool = attrs.field(default=False, init=False)
    _data: list[str] = attrs.field(factory=list, init=False)
    _event: str | None = attrs.field(default=None, init=False)
    _retry_seen: int | None = attrs.field(default=None, init=False)

    def feed(self, chunk: bytes) -> Iterator[ServerSentEvent]:
        """The events that *chunk* completes, in order."""
        text = self._pending + self._decoder.decode(chunk)
        if not self._started and text:
            self._started = True
            if text[0] == "\ufeff":
                text = text[1:]
        # A trailing "\r" may be the first half of "\r\n": keep it for the next chunk.
        cut = len(text) - 1 if text.endswith("\r") else len(text)
        lines = _LINE_END.split(text[:cut])
        self._pending = lines.pop() + text[cut:]  # the last piece is an unfinished line
        for line in lines:
            event = self._line(line)
            if event is not None:
                yield event

    def _line(self, line: str) -> ServerSentEvent | None:
        if not line:
            return self._dispatch()
        if line[0] == ":":
            return None  # a comment, e.g. a keep-alive
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self.last_event_id = value
        elif name == "retry" and value.isdigit():
            self.retry = self._retry_seen = int(value)
        return None

    def _dispatch(self) -> ServerSentEvent | None:
        data, event, retry = self._data, self._event, self._retry_seen
        self._data, self._event, self._retry_seen = [], None, None
        if not data:
            return None
        return ServerSentEvent("\n".join(data), event, self.last_event_id, retry)
