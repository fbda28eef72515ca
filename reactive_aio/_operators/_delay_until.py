"""``delay_until``: hold each item until the trigger ``fn(item)`` returns has ended.

The trigger is an awaitable (awaited; its result is ignored, ``None`` included), an async
iterable or a publisher (its items are ignored; the item is released when it completes).
Items are delayed one at a time and keep their order (Reactor's ``delayUntil``).

Backpressure: as ``concat_map``: the source is asked for one item at a time; the trigger is
asked for everything.
Errors: an error of the source or of a trigger, or a raising *fn*, cancels both, then
``on_error``.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from .._core import Publisher
from .._sources._from_iterable import IterablePublisher
from ._as_publisher import as_publisher
from ._concat_map import ConcatMapPublisher
from ._then import ThenPublisher

__all__ = ("delay_until_publisher",)

T = TypeVar("T")


async def _after(trigger: Awaitable[object], item: T) -> T:
    await trigger
    return item


def delay_until_publisher(
    source: Publisher[T], fn: Callable[[T], object], prefetch: int
) -> Publisher[T]:
    """What `Flux.delay_until` wraps: each item becomes "the trigger, then the item"."""

    def delayed(item: T) -> Publisher[T] | Awaitable[T]:
        trigger = fn(item)
        if inspect.isawaitable(trigger):
            return _after(trigger, item)  # one value, whatever the trigger's result
        relay: Publisher[T] = IterablePublisher((item,))
        triggered: Publisher[Any] = as_publisher(trigger, "delay_until")
        return ThenPublisher(triggered, relay)

    return ConcatMapPublisher(source, delayed, 1, prefetch, False)
