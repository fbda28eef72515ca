"""``Flux.zip`` and ``zip_with``: tuples of the n-th item of every source.

Backpressure: every source prefetches *prefetch* items into a bounded queue, re-requested in
batches as tuples are emitted; downstream demand is honoured exactly. A tuple is emitted only
once every source has an item queued.
Errors: the first error of any source cancels the others, then ``on_error`` once. As soon as
one source completed and its queue is empty, no further tuple can form: the others are
cancelled and the stream completes. Zipping no sources completes at once.
"""

from __future__ import annotations

from typing import Any, final

import attrs

from .._core import (
    Publisher,
    QueueDrain,
    Subscriber,
    require_not_none,
    require_publisher,
)
from ._flat_map import DEFAULT_PREFETCH, check_sizes

__all__ = ("ZipPublisher",)


@final
@attrs.frozen
class ZipPublisher(Publisher[tuple[Any, ...]]):
    """What `Flux.zip` returns."""

    sources: tuple[Publisher[Any], ...]
    prefetch: int = DEFAULT_PREFETCH

    def __attrs_post_init__(self) -> None:
        for source in self.sources:
            require_publisher(source, "zip")
        check_sizes(1, self.prefetch)

    def subscribe(self, subscriber: Subscriber[tuple[Any, ...]]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        main = _ZipMain(subscriber)
        main.subscribe_all(self.sources, self.prefetch)


@final
@attrs.define(eq=False)
class _ZipMain(QueueDrain[tuple[Any, ...]]):
    def _emit(self, limit: int) -> int:
        inners = self.inners
        if not inners:
            self._complete()
            return 0
        emitted = 0
        downstream = self._downstream
        assert downstream is not None
        while True:
            ready = True
            for inner in inners:
                if not inner.queue:
                    if inner.done:
                        self._complete()  # no further tuple can form
                        return emitted
                    ready = False
            if not ready or emitted >= limit:
                return emitted
            downstream.on_next(tuple([inner.poll() for inner in inners]))
            emitted += 1
            if self._done:
                return emitted

    def _release(self) -> None:
        inners, self.inners = self.inners, []
        for inner in inners:
            inner.cancel()
