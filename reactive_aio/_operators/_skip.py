"""``skip``: drop the first *n* items.

Backpressure: the first downstream request is raised by *n* (saturated), so the skipped items
cost no extra round trip; after that demand passes through.
Errors: upstream errors pass through.
"""

from __future__ import annotations

from typing import Generic, TypeVar, final

import attrs

from .._core import OperatorSubscriber, Publisher, Subscriber, add_demand, require_not_none

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
        self.source.subscribe(_SkipSubscriber(subscriber, remaining=self.count))


@final
@attrs.define(eq=False)
class _SkipSubscriber(OperatorSubscriber[T, T]):
    _remaining: int = attrs.field(kw_only=True, alias="remaining")
    _extra: int = attrs.field(init=False)
    """Added to the first positive request: the items that will be dropped."""

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        self._extra = self._remaining

    def on_next(self, item: T) -> None:
        if self._remaining:
            self._remaining -= 1
            return
        self._next(item)

    def _request(self, n: int) -> None:
        extra = self._extra
        if extra and type(n) is int and n > 0:
            self._extra = 0
            n = add_demand(n, extra)
        super()._request(n)
