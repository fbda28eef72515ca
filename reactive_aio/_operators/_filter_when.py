"""``filter_when``: keep the items for which an asynchronous test answers true.

``fn(item)`` returns an awaitable, an async iterable or a publisher; its first value decides
(truthy: the item is emitted), the rest of it is cancelled; one that ends without a value
drops the item. Items are tested one at a time and keep their order (Reactor's
``filterWhen``).

Backpressure: as ``concat_map``: the source is asked for one item at a time, the next only
once the current test answered.
Errors: an error of the source or of a test, or a raising *fn*, cancels both, then
``on_error``; a test returning ``None`` is a `NullSignalError`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from .._core import Publisher
from ._as_publisher import as_publisher
from ._concat_map import ConcatMapPublisher
from ._filter import filter_publisher
from ._map import map_publisher
from ._take import TakePublisher

__all__ = ("filter_when_publisher",)

T = TypeVar("T")


def filter_when_publisher(
    source: Publisher[T], fn: Callable[[T], object], prefetch: int
) -> Publisher[T]:
    """What `Flux.filter_when` wraps: each item becomes its test's first value, kept only when
    truthy and mapped back to the item."""

    def test(item: T) -> Publisher[Any]:
        answer = TakePublisher(as_publisher(fn(item), "filter_when"), 1)
        return map_publisher(filter_publisher(answer, bool), lambda _: item)

    return ConcatMapPublisher(source, test, 1, prefetch, False)
