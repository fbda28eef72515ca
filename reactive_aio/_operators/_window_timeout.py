"""``window_timeout``: windows of up to *max_size* items, closed when full or *max_time* after
they opened, each a publisher with its own demand.

A window opens with its first item (there is never an empty window) and is a unicast
publisher like those of ``window(count)``: one subscriber, items buffered until requested.
Backpressure: ``request(n)`` windows asks upstream for ``n * max_size`` items (saturated). A
window closed early by the timer uses one unit of demand for fewer items, so a new window may
open while the outer subscriber has no demand: it is held (with its items) and emitted on the
next ``request``; the hold is bounded by what was requested upstream.
Errors: an upstream error goes to the open window (after its buffered items) and then to the
outer subscriber, after the windows it holds. Cancelling the outer stream completes the open
window and cancels upstream.
Loop: one `Deadline`, armed when a window opens and disarmed when it closes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar, final

import attrs

from .._core import (
    Deadline,
    Publisher,
    SizedTimedOperator,
    Subscriber,
    UnicastBuffer,
    require_not_none,
    require_running_loop,
)

__all__ = ("WindowTimeoutPublisher",)

T = TypeVar("T")
W = TypeVar("W")


@final
@attrs.frozen
class WindowTimeoutPublisher(Publisher[W], Generic[T, W]):
    """What `Flux.window_timeout` returns; *wrap* turns each window into what is emitted."""

    source: Publisher[T]
    max_size: int
    max_time: float
    wrap: Callable[[Publisher[T]], W]

    def __attrs_post_init__(self) -> None:
        if self.max_size <= 0:
            raise ValueError(f"window_timeout max_size must be > 0, got {self.max_size}")
        if not self.max_time > 0:
            raise ValueError(f"window_timeout max_time must be > 0 seconds, got {self.max_time}")

    def subscribe(self, subscriber: Subscriber[W]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        loop = require_running_loop("window_timeout")
        operator = _WindowTimeoutSubscriber[T, W](
            subscriber,
            max_size=self.max_size,
            max_time=self.max_time,
            wrap=self.wrap,
            what="window_timeout",
        )
        operator.deadline = Deadline(loop, operator.close)
        self.source.subscribe(operator)


@final
@attrs.define(eq=False)
class _WindowTimeoutSubscriber(SizedTimedOperator[T, W], Generic[T, W]):
    _wrap: Callable[[Publisher[T]], W] = attrs.field(kw_only=True, alias="wrap")
    _window: UnicastBuffer[T] | None = attrs.field(default=None, init=False)
    _filled: int = attrs.field(default=0, init=False)

    def on_next(self, item: T) -> None:
        if item is None:
            require_not_none(item, "2.13", "on_next's item")
        if self.done:
            return
        window = self._window
        if window is None:
            window = UnicastBuffer[T]()
            self._window = window
            self._filled = 0
            assert self.deadline is not None
            self.deadline.arm_in(self._max_time)
            self.push(self._wrap(window))
        window.push(item)
        self._filled += 1
        if self._filled >= self._max_size:
            self.close()

    def close(self, error: BaseException | None = None) -> None:
        """End the open window (when full, when its time is up, or at the end)."""
        if self.deadline is not None:
            self.deadline.disarm()
        window, self._window = self._window, None
        if window is not None:
            window.end(error)

    def _ending(self, error: BaseException | None) -> None:
        self.close(error)
        self.finish(error)

    def _release(self) -> None:
        self.close()
        super()._release()
