"""``on_backpressure_drop``: deliver an item only if the subscriber has demand for it.

Backpressure: unbounded-in; an item arriving without demand is dropped (and passed to
*on_dropped*); nothing is buffered.
Errors: if *on_dropped* raises, upstream is cancelled and the error is delivered; upstream
errors pass through.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from .._core import Overflow, Publisher
from ._on_backpressure_buffer import OnBackpressureBufferPublisher

__all__ = ("on_backpressure_drop",)

T = TypeVar("T")


def on_backpressure_drop(
    source: Publisher[T], on_dropped: Callable[[T], object] | None
) -> OnBackpressureBufferPublisher[T]:
    """Build the publisher for `Flux.on_backpressure_drop`."""
    return OnBackpressureBufferPublisher(source, Overflow.DROP, on_dropped)
