"""``skip``: drop the first *n* items.

Backpressure: the first downstream request is raised by *n* (saturated), so the skipped items
cost no extra round trip; after that demand passes through.
Errors: upstream errors pass through.
"""

from __future__ import annotations

from typing import Generic, TypeVar, final

import attrs

from .._core import AskAheadSubscriber, Publisher, Subscriber, require_not_none

__all__ = ("SkipPublisher",)

T = TypeVar("T")


@final
@attrs.frozen
class SkipPublisher(Publisher[T], Generic[T]):
    """What `Flux.skip` returns."""

    source: Publisher[T]
    count: int

    def __attrs_post_init__(self) -> None:
        if self.count < 0:
            raise ValueError(f"skip count must be >= 0, got {self.count}")

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(_SkipSubscriber(subscriber, ahead=self.count, remaining=self.count))


@final
@attrs.define(eq=False)
class _SkipSubscriber(AskAheadSubscriber[T]):
    _remaining: int = attrs.field(kw_only=True, alias="remaining")

    def on_next(self, item: T) -> None:
        if self._remaining:
            self._remaining -= 1
            return
        self._next(item)
