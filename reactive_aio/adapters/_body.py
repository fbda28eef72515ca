"""Turning stream items into response-body bytes, shared by the Starlette and aiohttp adapters."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ("body_encoder",)

T = TypeVar("T")


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


def body_encoder(encode: Callable[[T], Any] | None, what: str) -> Callable[[T], bytes]:
    """Bytes for each item: ``bytes``/``str`` as they are, else whatever *encode* makes of it.

    *what* names the adapter in the `TypeError` for an item that is neither.
    """
    if encode is None:
        return lambda item: _to_bytes(item, what)
    user_encode = encode
    return lambda item: _to_bytes(user_encode(item), what)
