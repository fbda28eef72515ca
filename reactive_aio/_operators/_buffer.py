"""``buffer``: lists of *count* items, a new one every *skip* items.

``skip`` defaults to *count* (consecutive lists); ``skip > count`` leaves gaps, ``skip < count``
gives overlapping lists. The last lists may be shorter when the stream ends.

Backpressure: ``request(n)`` lists becomes a request of exactly the items they need upstream:
``count + (n - 1) * skip`` the first time (the items of the last list, not the gap after it),
``n * skip`` after that (the gap left over, then the lists), saturated. The partial lists left
at completion are emitted within demand by a `BufferDrain`, then completion follows.

Deliberate choice: with gaps (``skip > count``) the first request no longer includes the gap
after the last list (``buffer(2, 3)`` asks 5 items for 2 lists, as Reactor does, not 6): an
item nobody will see is not produced before it is needed.
Errors: upstream errors pass through; partial lists are dropped.
"""

from __future__ import annotations

from collections import deque
from typing import Generic, TypeVar, final

import attrs

from .._core import (
    Publisher,
    Subscriber,
    TailSubscriber,
    add_demand,
    produced,
    require_not_none,
)

__all__ = ("BufferPublisher",)

T = TypeVar("T")


@final
@attrs.frozen
class BufferPublisher(Publisher[list[T]], Generic[T]):
    """What `Flux.buffer` returns."""

    source: Publisher[T]
    count: int
    skip: int

    def __attrs_post_init__(self) -> None:
        if self.count <= 0 or self.skip <= 0:
            raise ValueError(f"buffer count and skip must be > 0, got {self.count}, {self.skip}")

    def subscribe(self, subscriber: Subscriber[list[T]]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(_BufferSubscriber(subscriber, count=self.count, skip=self.skip))


@final
@attrs.define(eq=False)
class _BufferSubscriber(TailSubscriber[T, list[T]]):
    _count: int = attrs.field(kw_only=True, alias="count")
    _skip: int = attrs.field(kw_only=True, alias="skip")
    _open: deque[list[T]] = attrs.field(factory=deque, init=False)
    """Lists being filled, oldest first (more than one only when lists overlap)."""
    _position: int = attrs.field(default=0, init=False)
    _first_request: bool = attrs.field(default=True, init=False)

    def on_next(self, item: T) -> None:
        if self._done:
            return
        position = self._position
        self._position = position + 1
        open_lists = self._open
        if position % self._skip == 0:
            open_lists.append([])
        if not open_lists:
            return  # in the gap between lists
        for items in open_lists:
            items.append(item)
        if len(open_lists[0]) == self._count:
            self._requested = produced(self._requested, 1)
            self._next(open_lists.popleft())

    def on_complete(self) -> None:
        open_lists, self._open = self._open, deque()
        self._complete_with(open_lists)

    def _drop_held(self) -> None:
        self._open.clear()

    def _ask_upstream(self, n: int) -> None:
        skip = self._skip
        ask = self._count + (n - 1) * skip if self._first_request else n * skip
        self._first_request = False
        upstream = self._upstream
        if upstream is not None:
            upstream.request(add_demand(0, ask))
