"""``Flux.combine_latest``: a tuple of every source's latest item, each time any source emits.

Nothing is emitted until every source has emitted once; from then on each item of any source
yields a tuple, in arrival order.

Backpressure: every source prefetches *prefetch* items into a bounded queue, re-requested in
batches; items that arrive before every source has a value are consumed without demand (they
only update the latest value); downstream demand is honoured exactly.
Errors: the first error of any source cancels the others, then ``on_error`` once. A source
that completes without ever emitting ends the stream (the others are cancelled): no tuple
can form. Otherwise the stream completes when every source has completed.
"""

from __future__ import annotations

from collections import deque
from typing import Any, final

import attrs

from .._core import (
    Publisher,
    QueueDrain,
    QueueSubscriber,
    Subscriber,
    require_not_none,
    require_publisher,
)
from ._flat_map import DEFAULT_PREFETCH, check_sizes

__all__ = ("CombineLatestPublisher",)

_MISSING: Any = object()


@final
@attrs.frozen
class CombineLatestPublisher(Publisher[tuple[Any, ...]]):
    """What `Flux.combine_latest` returns."""

    sources: tuple[Publisher[Any], ...]
    prefetch: int = DEFAULT_PREFETCH

    def __attrs_post_init__(self) -> None:
        for source in self.sources:
            require_publisher(source, "combine_latest")
        check_sizes(1, self.prefetch)

    def subscribe(self, subscriber: Subscriber[tuple[Any, ...]]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        main = _CombineLatestMain(subscriber)
        main.latest = [_MISSING] * len(self.sources)
        main.subscribe_all(self.sources, self.prefetch)


@final
@attrs.define(eq=False)
class _CombineLatestMain(QueueDrain[tuple[Any, ...]]):
    latest: list[Any] = attrs.field(factory=list, init=False)
    _missing: int = attrs.field(default=-1, init=False)
    """Sources without a value yet (-1: not counted yet)."""
    _arrivals: deque[QueueSubscriber[Any]] = attrs.field(factory=deque, init=False)
    """Which source each queued item came from, in arrival order across sources."""

    def inner_next(self, inner: QueueSubscriber[Any]) -> None:
        self._arrivals.append(inner)
        self.signal()

    def _emit(self, limit: int) -> int:
        latest = self.latest
        if self._missing < 0:
            self._missing = len(latest)
        arrivals = self._arrivals
        emitted = 0
        downstream = self._downstream
        assert downstream is not None
        while arrivals:
            inner = arrivals[0]
            index = inner.index
            missing = self._missing
            first = latest[index] is _MISSING
            if emitted >= limit and (missing == 0 or (missing == 1 and first)):
                return emitted  # this item would make a tuple: it waits for demand
            arrivals.popleft()
            if first:
                self._missing = missing - 1
            latest[index] = inner.poll()
            if self._missing == 0:
                downstream.on_next(tuple(latest))
                emitted += 1
                if self._done:
                    return emitted
        finished = 0
        for inner in self.inners:
            if inner.done:
                if latest[inner.index] is _MISSING:
                    self._complete()  # it never emitted: no tuple can ever form
                    return emitted
                finished += 1
        if finished == len(self.inners):
            self._complete()
        return emitted

    def _release(self) -> None:
        inners, self.inners = self.inners, []
        self._arrivals.clear()
        self.latest = []
        for inner in inners:
            inner.cancel()
