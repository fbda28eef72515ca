"""``take_for``: the items of the first *duration* seconds, then completion.

Named apart from ``take(n)`` (a count) on purpose: ``take_for(2.0)`` is two seconds.
Backpressure: pass-through.
Errors: upstream errors pass through; when the time is up upstream is cancelled, then
``on_complete``.
Loop: one timer handle, armed at subscribe, cancelled on termination or ``cancel``.
"""

from __future__ import annotations

import asyncio
from typing import Generic, TypeVar, final

import attrs

from .._core import (
    OperatorSubscriber,
    Publisher,
    Subscriber,
    Subscription,
    require_not_none,
    require_running_loop,
)

__all__ = ("TakeForPublisher",)

T = TypeVar("T")


@final
@attrs.frozen
class TakeForPublisher(Publisher[T], Generic[T]):
    """What `Flux.take_for` returns."""

    source: Publisher[T]
    duration: float

    def __attrs_post_init__(self) -> None:
        if self.duration < 0:
            raise ValueError(f"take_for duration must be >= 0 seconds, got {self.duration}")

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        loop = require_running_loop("take_for")
        self.source.subscribe(_TakeForSubscriber(subscriber, loop=loop, duration=self.duration))


@final
@attrs.define(eq=False)
class _TakeForSubscriber(OperatorSubscriber[T, T]):
    _timer_loop: asyncio.AbstractEventLoop = attrs.field(kw_only=True, alias="loop")
    _duration: float = attrs.field(kw_only=True, alias="duration")
    _handle: asyncio.TimerHandle | None = attrs.field(default=None, init=False)

    def on_subscribe(self, subscription: Subscription) -> None:
        first = self._upstream is None
        super().on_subscribe(subscription)
        if first and not self._done:
            self._handle = self._timer_loop.call_later(self._duration, self._time_up)

    def on_next(self, item: T) -> None:
        self._next(item)

    def on_complete(self) -> None:
        self._stop_timer()
        super().on_complete()

    def on_error(self, error: BaseException) -> None:
        self._stop_timer()
        super().on_error(error)

    def cancel(self) -> None:
        if self._hand_over_cancel():
            return
        self._stop_timer()
        super().cancel()

    def _time_up(self) -> None:
        self._handle = None
        self._complete_early()

    def _stop_timer(self) -> None:
        handle = self._handle
        if handle is not None:
            self._handle = None
            handle.cancel()
