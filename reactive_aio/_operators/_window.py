"""``window``: split the stream into consecutive windows of *count* items, each a publisher.

Every window is a `UnicastBuffer` with its own demand: it accepts one subscriber (a second
one gets ``on_error``) and buffers its items until they are requested. A window opens with
its first item, so there is never an empty window.

Backpressure: ``request(n)`` windows asks upstream for ``n * count`` items (saturated); a
window therefore never buffers more than *count* items, however slowly it is consumed.
Cancelling the outer stream stops new windows; upstream is cancelled once the window being
filled is also done (completed or cancelled by its subscriber). Items of a window whose
subscriber cancelled are dropped.
Errors: an upstream error goes to the open window (after its buffered items) and to the
outer subscriber.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar, final

import attrs

from .._core import (
    OperatorSubscriber,
    Publisher,
    Subscriber,
    UnicastBuffer,
    add_demand,
    require_not_none,
)

__all__ = ("WindowPublisher",)

T = TypeVar("T")
W = TypeVar("W")


@final
@attrs.frozen
class WindowPublisher(Publisher[W], Generic[T, W]):
    """What `Flux.window` returns; *wrap* turns each window publisher into what is emitted."""

    source: Publisher[T]
    count: int
    wrap: Callable[[Publisher[T]], W]

    def __attrs_post_init__(self) -> None:
        if self.count <= 0:
            raise ValueError(f"window count must be > 0, got {self.count}")

    def subscribe(self, subscriber: Subscriber[W]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(_WindowSubscriber(subscriber, count=self.count, wrap=self.wrap))


@final
@attrs.define(eq=False)
class _WindowSubscriber(OperatorSubscriber[T, W], Generic[T, W]):
    _count: int = attrs.field(kw_only=True, alias="count")
    _wrap: Callable[[Publisher[T]], W] = attrs.field(kw_only=True, alias="wrap")
    _window: UnicastBuffer[T] | None = attrs.field(default=None, init=False)
    _filled: int = attrs.field(default=0, init=False)
    _outer_cancelled: bool = attrs.field(default=False, init=False)

    def on_next(self, item: T) -> None:
        window = self._window
        if window is None:
            if self._done:
                return
            if self._outer_cancelled:
                self._finish()
                self._cancel_upstream()
                return
            window = UnicastBuffer[T](on_done=self._window_done)
            self._window = window
            self._next(self._wrap(window))
        window.push(item)
        self._filled += 1
        if self._filled == self._count:
            self._filled = 0
            self._window = None
            window.end()

    def on_error(self, error: BaseException) -> None:
        # Upstream has terminated: a cancel that ending the window provokes (its subscriber
        # failing the outer stream) must not reach upstream inside its on_error (rule 2.3).
        self._upstream = None
        window, self._window = self._window, None
        if window is not None:
            window.end(error)
        if self._outer_cancelled:
            self._finish()
            return
        super().on_error(error)

    def on_complete(self) -> None:
        self._upstream = None  # as in on_error
        window, self._window = self._window, None
        if window is not None:
            window.end()
        if self._outer_cancelled:
            self._finish()
            return
        super().on_complete()

    def _request(self, n: int) -> None:
        valid = type(n) is int and n > 0  # a bad n goes upstream as is, to fail there (rule 3.9)
        super()._request(add_demand(0, n * self._count) if valid else n)

    def cancel(self) -> None:
        if self._hand_over_cancel() or self._outer_cancelled:
            return
        self._outer_cancelled = True
        window = self._window
        if window is None or window.done:
            self._finish()
            self._cancel_upstream()

    def _window_done(self) -> None:
        """The open window ended or its subscriber cancelled."""
        if self._outer_cancelled and not self._done:
            window = self._window
            if window is None or window.done:
                self._finish()
                self._cancel_upstream()
