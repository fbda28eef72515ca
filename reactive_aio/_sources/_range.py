"""``Flux.range``: the integers ``start, start + 1, …`` (``count`` of them).

Backpressure: full; emits exactly what was requested, from the drain.
Errors: none of its own; completes without demand when ``count`` is reached.
Fusion: like ``from_iterable``, whose emit loop it shares.
"""

from __future__ import annotations

from typing import final

import attrs

from .._core import Subscriber, require_not_none
from .._operators._fuse import FusableSource, FusedSubscriber
from ._from_iterable import IteratorSubscription

__all__ = ("RangePublisher",)


@final
@attrs.frozen
class RangePublisher(FusableSource[int]):
    """Cold: every subscriber gets the whole range."""

    start: int
    count: int

    def __attrs_post_init__(self) -> None:
        if self.count < 0:
            raise ValueError(f"range count must be >= 0, got {self.count}")

    def subscribe(self, subscriber: Subscriber[int]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self._start(subscriber, None)

    def subscribe_fused(self, chain: FusedSubscriber) -> None:
        self._start(chain, chain)

    def _start(self, subscriber: Subscriber[int], chain: FusedSubscriber | None) -> None:
        start = self.start
        IteratorSubscription[int](
            subscriber,
            iterator=iter(range(start, start + self.count)),
            length=self.count,
            chain=chain,
        ).start()
