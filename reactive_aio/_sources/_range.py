"""``Flux.range``: the integers ``start, start + 1, …`` (``count`` of them).

Backpressure: full; emits exactly what was requested, from the drain.
Errors: none of its own; completes without demand when ``count`` is reached.
Fusion: like ``from_iterable``, whose emit loop it shares.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import final

import attrs

from .._core import Publisher, Subscriber, require_not_none
from ._from_iterable import IteratorSubscription

__all__ = ("RangePublisher",)


@final
@attrs.frozen
class RangePublisher(Publisher[int]):
    """Cold: every subscriber gets the whole range."""

    start: int
    count: int

    def __attrs_post_init__(self) -> None:
        if self.count < 0:
            raise ValueError(f"range count must be >= 0, got {self.count}")

    def subscribe(self, subscriber: Subscriber[int]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.subscribe_fused(subscriber, None)

    def subscribe_fused(
        self, subscriber: Subscriber[int], try_next: Callable[[int], bool] | None
    ) -> None:
        """Subscribe a fused chain's subscriber (see `IterablePublisher.subscribe_fused`)."""
        start = self.start
        IteratorSubscription[int](
            subscriber,
            iterator=iter(range(start, start + self.count)),
            length=self.count,
            try_next=try_next,
        ).start()
