"""``filter``: keep the items for which a predicate is true.

Backpressure: pass-through; behind ``range``, ``from_iterable`` or ``just`` a dropped item does
not count against demand; behind any other source dropped items are re-requested in batches
(once they are as many as the items still in flight), unless demand is unbounded.
Errors: if the predicate raises, upstream is cancelled first, then ``on_error``.
Fusion: a stage of `FusedPublisher`, like ``map``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from .._core import Publisher, fuse

__all__ = ("filter_publisher",)

T = TypeVar("T")


def filter_publisher(source: Publisher[T], predicate: Callable[[T], object]) -> Publisher[Any]:
    """What `Flux.filter` wraps."""
    return fuse(source, (False, predicate))
