"""``window(boundary)``: windows of the items between two items of a *boundary* publisher.

The first window opens at subscription; each boundary item closes the open window and opens
the next (Reactor's ``window(Publisher)``), so a window may be empty. The boundary's
completion completes the open window and the stream (the source cancelled). Each window is a
`UnicastBuffer` with its own demand, as those of ``window(count)``.

Backpressure: the source and the boundary are both requested without bound (the boundary
decides when a window is cut, not demand): a window buffers what arrives until its
subscriber asks for it. Windows that open without outer demand are held, up to `HOLD`, then
the stream fails with `MissingBackpressureError`. Cancelling the outer stream stops new
windows; the source and the boundary are cancelled once the open window is also done.
Errors: an error of either publisher cancels the other one and goes to the open window
(after its buffered items) and to the outer subscriber.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar, final

import attrs

from .._core import (
    MAX_DEMAND,
    Companion,
    Publisher,
    Subscriber,
    Subscription,
    UnicastBuffer,
    require_not_none,
    require_publisher,
    stop_companion,
)
from ._debounce import HOLD
from ._window import WindowsOperator

__all__ = ("WindowBoundaryPublisher",)

T = TypeVar("T")
W = TypeVar("W")


@final
@attrs.frozen
class WindowBoundaryPublisher(Publisher[W], Generic[T, W]):
    """What `Flux.window` returns when given a boundary publisher."""

    source: Publisher[T]
    boundary: Publisher[object]
    wrap: Callable[[Publisher[T]], W]

    def __attrs_post_init__(self) -> None:
        require_publisher(self.boundary, "window")

    def subscribe(self, subscriber: Subscriber[W]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(
            _WindowBoundarySubscriber[T, W](
                subscriber, boundary=self.boundary, wrap=self.wrap, capacity=HOLD, what="window"
            )
        )


@final
@attrs.define(eq=False)
class _WindowBoundarySubscriber(WindowsOperator[T, W], Generic[T, W]):
    _boundary: Publisher[object] | None = attrs.field(kw_only=True, alias="boundary")
    _companion: Companion | None = attrs.field(default=None, init=False)

    def _subscribed(self, upstream: Subscription) -> None:
        self.start()
        boundary, self._boundary = self._boundary, None
        if self.done or boundary is None:
            return
        self._open_window(UnicastBuffer[T](on_done=self._window_done))
        self._companion = Companion(self._cut, self._boundary_ended).follow(boundary)
        if not self._upstream_done:
            upstream.request(MAX_DEMAND)

    def on_next(self, item: T) -> None:
        if item is None:
            require_not_none(item, "2.13", "on_next's item")
        if not self._upstream_done and self._open:
            self._open[0].push(item)

    def _cut(self, _: object) -> None:
        if self._open:
            self._close_window()
        if self._filling() and not self._done:
            self._open_window(UnicastBuffer[T](on_done=self._window_done))

    def _boundary_ended(self, error: BaseException | None) -> None:
        self._drop_upstream()
        self._ending(error)

    def _ending(self, error: BaseException | None) -> None:
        stop_companion(self._companion)
        super()._ending(error)

    def _drop_upstream(self) -> None:
        stop_companion(self._companion)
        super()._drop_upstream()
