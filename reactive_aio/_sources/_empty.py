"""``Flux.empty``: completes at once.

Backpressure: none needed; ``on_complete`` follows ``on_subscribe`` without demand (rule 2.9).
Errors: none.
Fusion: a `SyncSource` with an empty iterator, so a ``flat_map`` that maps an item to nothing
subscribes nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Never, final

import attrs

from .._core import DrainSubscription, Publisher, Subscriber, SyncSource, require_not_none

__all__ = ("EmptyPublisher",)


@final
@attrs.frozen
class EmptyPublisher(Publisher[Never], SyncSource[Never]):
    """A stream with no items."""

    def sync_iterator(self) -> Iterator[Never]:
        return iter(())

    def subscribe(self, subscriber: Subscriber[Never]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        _EmptySubscription(subscriber).start()


@final
@attrs.define(eq=False)
class _EmptySubscription(DrainSubscription[Never]):
    def _emit(self, limit: int) -> int:
        self._complete()
        return 0
