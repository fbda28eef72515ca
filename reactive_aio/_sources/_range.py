"""``Flux.range``: the integers ``start, start + 1, …`` (``count`` of them).

Backpressure: full; emits exactly what was requested, from the drain.
Errors: none of its own; completes without demand when ``count`` is reached.
Fusion: like ``from_iterable``, whose emit loop (`IteratorSubscription`) it shares; a plain
subscriber gets a loop of its own (a range yields no None and needs no position count). As a
`SyncSource` it hands over ``iter(range(...))``: a ``flat_map`` pulls its short inner ranges in
its own drain; a fold over it (and its fused maps and filters) steps through ``sync_range()``
a slice at a time.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import final

import attrs

from .._core import (
    DrainSubscription,
    FusableSource,
    FusedSubscriber,
    IteratorSubscription,
    Subscriber,
    require_not_none,
)

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
        _RangeSubscription(subscriber, index=self.start, end=self.start + self.count).start()

    def sync_iterator(self) -> Iterator[int]:
        return iter(self.sync_range())

    def sync_range(self) -> range:
        return range(self.start, self.start + self.count)

    def subscribe_fused(self, chain: FusedSubscriber) -> None:
        start = self.start
        IteratorSubscription[int](
            chain,
            iterator=iter(range(start, start + self.count)),
            length=self.count,
            nullable=False,
            chain=chain,
        ).start()


@final
@attrs.define(eq=False)
class _RangeSubscription(DrainSubscription[int]):
    _index: int = attrs.field(kw_only=True)
    _end: int = attrs.field(kw_only=True)

    def _emit(self, limit: int) -> int:
        index = self._index
        stop = min(self._end, index + limit)
        if index < stop:
            downstream = self._downstream
            assert downstream is not None
            on_next = downstream.on_next
            for value in range(index, stop):
                on_next(value)
                if self._done:  # on_next cancelled
                    self._index = value + 1
                    return value + 1 - index
            self._index = stop
        if stop >= self._end:
            self._complete()
        return stop - index if stop > index else 0
