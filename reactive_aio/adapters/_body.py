"""What the Starlette and aiohttp adapters share: the publisher a response streams, whatever
stream the handler handed over, and the response-body bytes of its items."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterable, Callable, Iterable
from typing import Any, TypeVar

from .._core import Publisher, short_repr
from .._flux import Flux

__all__ = ("body_encoder", "joined", "stream_source")

T = TypeVar("T")


def stream_source(source: Publisher[T] | AsyncIterable[T], what: str) -> Publisher[T]:
    """The publisher behind a response: a `Publisher` (a `Flux` too) as it is, an async
    iterable or async generator read through `Flux.from_async_iterable`.

    Checked when the response is built, so a wrong argument fails in the handler's own call,
    not later while the body is written.

    Raises:
        TypeError: *source* is none of these; the message names *what*'s argument.
    """
    _require_stream(source, what)
    if isinstance(source, Publisher):
        return source
    return Flux.from_async_iterable(source)


def _require_stream(value: object, what: str) -> None:
    if isinstance(value, Publisher | AsyncIterable):
        return
    if inspect.isasyncgenfunction(value):
        hint = f"; call it: {value.__name__}()"
    elif isinstance(value, Iterable) and not isinstance(value, str | bytes):
        hint = "; wrap a synchronous iterable in Flux.from_iterable(...)"
    else:
        hint = ""
    raise TypeError(
        f"{what}'s publisher argument takes a Publisher, a Flux, an async iterable or an "
        f"async generator, not {short_repr(value)}{hint}"
    )


def _to_bytes(item: object, what: str) -> bytes:
    if isinstance(item, bytes):
        return item
    if isinstance(item, str):
        return item.encode()
    if isinstance(item, bytearray | memoryview):
        return bytes(item)
    raise TypeError(
        f"{what} got a {type(item).__name__} item; pass encode= to turn items into bytes or str"
    )


def body_encoder(encode: Callable[[T], Any] | None, what: str) -> Callable[[list[T]], bytes]:
    """One chunk for the items ready at a write: ``bytes``/``str`` as they are, else whatever
    *encode* makes of each, joined.

    *what* names the adapter in the `TypeError` for an item that is neither.
    """
    if encode is None:
        return lambda items: b"".join([_to_bytes(item, what) for item in items])
    user_encode = encode
    return lambda items: b"".join([_to_bytes(user_encode(item), what) for item in items])


def joined(encode: Callable[[T], bytes]) -> Callable[[list[T]], bytes]:
    """One chunk for the items ready at a write, each encoded by *encode*."""
    return lambda items: b"".join([encode(item) for item in items])
