"""``on_backpressure_buffer``: let a fast upstream run ahead into a bounded buffer.

Backpressure: unbounded-in (upstream is asked for everything); up to *max_size* items wait
for downstream demand; when the buffer is full the *overflow* policy applies:
``"error"`` (default), ``"drop_oldest"`` or ``"drop_latest"``.
Errors: an overflow with ``"error"`` cancels upstream and fails with
`MissingBackpressureError` after the buffered items; if *on_overflow* raises, upstream is
cancelled and its error is delivered after the buffered items; upstream errors likewise.
Loop: an upstream that signals from its own thread meets the policy on that thread; what the
policy keeps is handed to the loop in batches, at most 1,024 items ahead (then the
upstream's thread waits for the loop). The same holds for ``on_backpressure_drop`` and
``on_backpressure_latest``, built on this operator.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, final

import attrs

from .._core import (
    Overflow,
    OverflowSubscriber,
    OverflowThen,
    Publisher,
    Subscriber,
    require_not_none,
)

__all__ = ("OnBackpressureBufferPublisher",)

T = TypeVar("T")


@final
@attrs.frozen
class OnBackpressureBufferPublisher(Publisher[T], Generic[T]):
    """What `Flux.on_backpressure_buffer` (and its drop/latest/error forms) returns."""

    source: Publisher[T]
    policy: Overflow
    on_overflow: Callable[[Any], object] | None = None

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        drain = OverflowSubscriber[T](subscriber, policy=self.policy, on_dropped=self.on_overflow)
        drain.start()
        self.source.subscribe(drain)


def on_backpressure_buffer(
    source: Publisher[T],
    max_size: int,
    overflow: OverflowThen,
    on_overflow: Callable[[T], object] | None,
) -> OnBackpressureBufferPublisher[T]:
    """Build the publisher for `Flux.on_backpressure_buffer`."""
    if max_size <= 0:
        raise ValueError(f"on_backpressure_buffer max_size must be > 0, got {max_size}")
    return OnBackpressureBufferPublisher(
        source, Overflow.BUFFER(max_size, then=overflow), on_overflow
    )
