"""``throttle_first``: emit an item, then drop the items of the next *window* seconds.

Backpressure: upstream is requested without bound (the operator drops by design); an item
that opens a window is held if downstream has no demand, up to `HOLD` of them, then the
stream fails with `MissingBackpressureError`.
Errors: upstream errors and completion are signalled after the items already held.
Loop: reads the loop clock per item; schedules nothing.
"""

from __future__ import annotations

import asyncio
from typing import Generic, TypeVar, final

import attrs

from .._core import MAX_DEMAND, Publisher, Subscriber, Subscription, require_not_none
from .._core._buffer_operator import BufferOperator
from .._core._deadline import RESOLUTION, require_running_loop
from ._debounce import HOLD

__all__ = ("ThrottleFirstPublisher",)

T = TypeVar("T")


@final
@attrs.frozen
class ThrottleFirstPublisher(Publisher[T], Generic[T]):
    """What `Flux.throttle_first` returns."""

    source: Publisher[T]
    window: float

    def __attrs_post_init__(self) -> None:
        if self.window < 0:
            raise ValueError(f"throttle_first window must be >= 0 seconds, got {self.window}")

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        loop = require_running_loop("throttle_first")
        self.source.subscribe(_ThrottleFirstSubscriber(subscriber, loop=loop, window=self.window))


@final
@attrs.define(eq=False)
class _ThrottleFirstSubscriber(BufferOperator[T, T]):
    _loop: asyncio.AbstractEventLoop = attrs.field(kw_only=True, alias="loop")
    _window: float = attrs.field(kw_only=True, alias="window")
    _open_at: float = attrs.field(default=float("-inf"), init=False)

    def _name(self) -> str:
        return "throttle_first"

    def _capacity(self) -> int:
        return HOLD

    def _started(self, upstream: Subscription) -> None:
        upstream.request(MAX_DEMAND)

    def on_next(self, item: T) -> None:
        require_not_none(item, "2.13", "on_next's item")
        now = self._loop.time()
        if now + RESOLUTION >= self._open_at:
            self._open_at = now + self._window
            self._out.push(item)
