"""``throttle_first``: emit an item, then drop the items of the next *window* seconds.

It is a filter on the loop clock: an item passes when it arrives at least *window* seconds
after the last item that passed.
Backpressure: pass-through, like ``filter``; each dropped item is replaced by a
``request(1)`` upstream, so nothing is ever held.
Errors: upstream errors and completion pass through.
Loop: reads the loop clock per item; schedules nothing.
"""

from __future__ import annotations

import asyncio
from typing import Generic, TypeVar, final

import attrs

from .._core import (
    RESOLUTION,
    DroppingSubscriber,
    Publisher,
    Subscriber,
    require_not_none,
    require_running_loop,
)

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
class _ThrottleFirstSubscriber(DroppingSubscriber[T, T]):
    _clock: asyncio.AbstractEventLoop = attrs.field(kw_only=True, alias="loop")
    _window: float = attrs.field(kw_only=True, alias="window")
    _open_at: float = attrs.field(default=float("-inf"), init=False)

    def on_next(self, item: T) -> None:
        now = self._clock.time()
        if now + RESOLUTION >= self._open_at:
            self._open_at = now + self._window
            self._next(item)
            return
        self._drop()  # a dropped item does not use up downstream's demand
