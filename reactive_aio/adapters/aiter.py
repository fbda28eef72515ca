"""Async iterables ⇄ publishers: the core's two bridges under their adapter names.

``from_async_iterable(it)`` is `Flux.from_async_iterable` (items awaited only as requested;
cancel closes the iterator) and ``to_async_iterator(p)`` is `reactive_aio.to_async_iterator`
(``async for`` over any publisher, its buffer bounded by a prefetch window). No second
implementation lives here.
"""

from __future__ import annotations

from collections.abc import AsyncIterable
from typing import TypeVar

from .._flux import Flux
from .._sinks._aiter import to_async_iterator as to_async_iterator

__all__ = ("from_async_iterable", "to_async_iterator")

T = TypeVar("T")


def from_async_iterable(iterable: AsyncIterable[T]) -> Flux[T]:
    """The items of *iterable*, awaited only as requested; see `Flux.from_async_iterable`."""
    return Flux.from_async_iterable(iterable)
