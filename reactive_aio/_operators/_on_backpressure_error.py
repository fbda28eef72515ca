"""``on_backpressure_error``: fail as soon as upstream outruns the subscriber.

Backpressure: unbounded-in; items are delivered while there is demand; the first item
without demand cancels upstream.
Errors: that item fails the stream with `MissingBackpressureError`; upstream errors pass
through.
"""

from __future__ import annotations

from typing import TypeVar

from .._core import Overflow, Publisher
from ._on_backpressure_buffer import OnBackpressureBufferPublisher

__all__ = ("on_backpressure_error",)

T = TypeVar("T")


def on_backpressure_error(source: Publisher[T]) -> OnBackpressureBufferPublisher[T]:
    """Build the publisher for `Flux.on_backpressure_error`."""
    return OnBackpressureBufferPublisher(source, Overflow.ERROR)
