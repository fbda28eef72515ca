"""``share``: one upstream subscription for every current subscriber.

Backpressure: that of `MulticastProcessor`: a prefetch window of *buffer_size* items,
re-requested in halves; subscribers move in lockstep, the slowest sets the pace.
Errors: upstream errors and completion reach every current subscriber; the first
subscriber after the last one left (or after termination) subscribes upstream afresh.
Context: each subscriber receives its signals (and the operators after it run their
callbacks) in the `contextvars` context in which it subscribed, as `MulticastProcessor` says.
"""

from __future__ import annotations

from typing import TypeVar

from .._core import Publisher
from ._publish import ConnectableFlux, publish

__all__ = ("share",)

T = TypeVar("T")


def share(source: Publisher[T], buffer_size: int) -> Publisher[T]:
    """``publish(source).ref_count(1)``."""
    connectable: ConnectableFlux[T, Publisher[T]] = publish(source, buffer_size, _same)
    return connectable.ref_count(1)


def _same(publisher: Publisher[T]) -> Publisher[T]:
    return publisher
