"""aiostream streams ⇄ publishers. Both sides are async iterables, so this is thin.

Backpressure: full both ways; `from_stream` pulls from the stream only as requested,
`to_stream` iterates the publisher with a bounded prefetch window.
Errors: pass through in both directions; leaving the stream's iteration early (or an
aiostream operator such as ``take`` finishing) cancels the subscription.

Needs the ``interop`` extra: ``pip install 'reactive_aio[interop]'``.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from typing import Any, TypeVar

try:
    from aiostream import operator
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "reactive_aio.adapters.aiostream needs aiostream: pip install 'reactive_aio[interop]'"
    ) from exc

from .._core import Publisher
from .._flux import Flux
from .._sinks._aiter import DEFAULT_PREFETCH, to_async_iterator

__all__ = ("from_stream", "to_stream")

T = TypeVar("T")


async def _iterate(stream: Any) -> AsyncIterator[Any]:
    # aiostream wants its streamer opened as a context, so it is closed even on cancel.
    async with stream.stream() as streamer:
        async for item in streamer:
            yield item


def from_stream(stream: AsyncIterable[T]) -> Flux[T]:
    """An aiostream ``Stream`` (or any async iterable) as a `Flux`; each subscriber streams an
    aiostream ``Stream`` afresh, since those can be iterated again."""
    if hasattr(stream, "stream"):
        return Flux.defer(lambda: Flux.from_async_iterable(_iterate(stream)))
    return Flux.from_async_iterable(stream)


@operator
async def _publisher_stream(publisher: Publisher[Any], prefetch: int) -> AsyncIterator[Any]:
    iterator = to_async_iterator(publisher, prefetch=prefetch)
    try:
        async for item in iterator:
            yield item
    finally:
        await iterator.aclose()


def to_stream(publisher: Publisher[T], *, prefetch: int = DEFAULT_PREFETCH) -> Any:
    """*publisher* as an aiostream ``Stream``: every iteration subscribes afresh.

    Args:
        publisher: the source.
        prefetch: the demand window of each iteration.

    Returns:
        an ``aiostream.Stream`` of the items, usable with aiostream's operators and pipes.
    """
    if prefetch <= 0:
        raise ValueError(f"prefetch must be > 0, got {prefetch}")
    return _publisher_stream(publisher, prefetch)
