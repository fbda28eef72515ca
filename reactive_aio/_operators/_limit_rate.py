"""``limit_rate``: shape upstream demand into a window of *high* replenished *low* at a time.

Backpressure: upstream sees ``request(high)`` first and then ``request(low)`` each time *low*
items have been delivered, whatever the subscriber asks for; items arriving ahead of the
subscriber's demand wait in a buffer of at most *high* items. ``high == MAX_DEMAND`` is
unbounded.
Errors: upstream errors are delivered after the buffered items; an upstream that sends more
than requested fails with `MissingBackpressureError`.
"""

from __future__ import annotations

from typing import Generic, TypeVar, final

import attrs

from .._core import (
    MAX_DEMAND,
    BufferDrain,
    Publisher,
    Subscriber,
    replenish_threshold,
    require_not_none,
)

__all__ = ("LimitRatePublisher",)

T = TypeVar("T")


@final
@attrs.frozen
class LimitRatePublisher(Publisher[T], Generic[T]):
    """What `Flux.limit_rate` returns."""

    source: Publisher[T]
    high: int
    low: int | None = None

    def __attrs_post_init__(self) -> None:
        if self.high <= 0:
            raise ValueError(f"limit_rate high must be > 0, got {self.high}")
        if self.low is not None and not 0 < self.low <= self.high:
            raise ValueError(f"limit_rate low must be in 1..{self.high}, got {self.low}")

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        high = min(self.high, MAX_DEMAND)
        low = self.low if self.low is not None else replenish_threshold(high)
        drain = BufferDrain[T](subscriber, prefetch=high, replenish=low)
        drain.start()
        self.source.subscribe(drain)
