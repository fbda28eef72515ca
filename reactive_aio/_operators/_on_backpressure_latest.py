"""``on_backpressure_latest``: keep only the newest item the subscriber has not asked for yet.

Backpressure: unbounded-in; one slot holds the latest undelivered item, each new item
replaces it (the replaced item is dropped); the next request receives the held item.
Errors: upstream errors are delivered after the held item.
"""

from __future__ import annotations

from typing import TypeVar

from .._core import Overflow, Publisher
from ._on_backpressure_buffer import OnBackpressureBufferPublisher

__all__ = ("on_backpressure_latest",)

T = TypeVar("T")


def on_backpressure_latest(source: Publisher[T]) -> OnBackpressureBufferPublisher[T]:
    """Build the publisher for `Flux.on_backpressure_latest`."""
    return OnBackpressureBufferPublisher(source, Overflow.LATEST)
