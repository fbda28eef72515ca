"""``buffer(boundary)``: lists of the items between two items of a *boundary* publisher.

Each boundary item emits the list gathered since the previous one, unless it is empty
(Reactor's ``buffer(Publisher)``); so is the list open when the source completes. The
boundary's completion ends the stream the same way (the open list, then completion, the
source cancelled).

Backpressure: the source and the boundary are both requested without bound (the boundary
decides when a list is cut, not demand), so the open list grows with what arrives between
two boundary items. Lists that find no downstream demand are held, up to `HOLD`, then the
stream fails with `MissingBackpressureError`.
Errors: an error of either publisher drops the open list, cancels the other one and is
signalled after the lists already held.
"""

from __future__ import annotations

from typing import Generic, TypeVar, final

import attrs

from .._core import (
    MAX_DEMAND,
    BufferDrain,
    Companion,
    Publisher,
    Subscriber,
    Subscription,
    require_not_none,
    require_publisher,
    stop_companion,
)
from ._debounce import HOLD

__all__ = ("BufferBoundaryPublisher",)

T = TypeVar("T")


@final
@attrs.frozen
class BufferBoundaryPublisher(Publisher[list[T]], Generic[T]):
    """What `Flux.buffer` returns when given a boundary publisher."""

    source: Publisher[T]
    boundary: Publisher[object]

    def __attrs_post_init__(self) -> None:
        require_publisher(self.boundary, "buffer")

    def subscribe(self, subscriber: Subscriber[list[T]]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(
            _BufferBoundarySubscriber[T](
                subscriber, boundary=self.boundary, capacity=HOLD, what="buffer"
            )
        )


@final
@attrs.define(eq=False)
class _BufferBoundarySubscriber(BufferDrain[list[T]], Generic[T]):
    _boundary: Publisher[object] | None = attrs.field(kw_only=True, alias="boundary")
    _companion: Companion | None = attrs.field(default=None, init=False)
    _items: list[T] = attrs.field(factory=list, init=False)

    def _subscribed(self, upstream: Subscription) -> None:
        self.start()
        boundary, self._boundary = self._boundary, None
        if self.done or boundary is None:
            return
        self._companion = Companion(self._cut, self._boundary_ended).follow(boundary)
        if not self._upstream_done:
            upstream.request(MAX_DEMAND)

    def on_next(self, item: T) -> None:
        if item is None:
            require_not_none(item, "2.13", "on_next's item")
        if not self._upstream_done:
            self._items.append(item)

    def _cut(self, _: object) -> None:
        items = self._items
        if items:
            self._items = []
            self.push(items)

    def _boundary_ended(self, error: BaseException | None) -> None:
        self._drop_upstream()
        self._ending(error)

    def _ending(self, error: BaseException | None) -> None:
        stop_companion(self._companion)
        items, self._items = self._items, []
        if error is None and items:
            self.push(items)
        self.finish(error)

    def _release(self) -> None:
        self._items = []
        super()._release()

    def _drop_upstream(self) -> None:
        stop_companion(self._companion)
        super()._drop_upstream()
