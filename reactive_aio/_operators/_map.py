"""``map``: apply a synchronous function to every item.

Backpressure: pass-through; ``request(n)`` goes upstream unchanged.
Errors: if *fn* raises or returns ``None``, upstream is cancelled first, then ``on_error``.
Fusion: a stage of `FusedPublisher`; consecutive maps and filters run in one subscriber, and
inside the emit loop of ``range``, ``from_iterable`` and ``just``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from .._core import Publisher, fuse

__all__ = ("map_publisher",)

T = TypeVar("T")
R = TypeVar("R")


def map_publisher(source: Publisher[T], fn: Callable[[T], R]) -> Publisher[Any]:
    """What `Flux.map` wraps; cold, so every subscribe starts afresh."""
    return fuse(source, (True, fn))
