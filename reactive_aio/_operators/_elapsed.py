"""``elapsed`` and ``timestamp``: pair every item with a time of the subscriber's event loop.

Both read ``loop.time()`` of the loop the operator was subscribed on: a monotonic clock in
seconds (``time.monotonic()`` on asyncio's loops; libuv's clock on uvloop, which counts whole
milliseconds, so close items may share a time; virtual time under
`reactive_aio.testing.VirtualTimeLoop`), never the wall clock, so steps of the system clock
cannot make durations negative. ``elapsed`` emits ``(seconds since the previous item, item)``,
the first measured from the subscription; ``timestamp`` emits ``(loop.time(), item)``.
Outside a running loop the clock is ``time.monotonic()``.

Backpressure: pass-through; one emission per upstream item.
Errors: upstream errors pass through.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Generic, TypeVar, final

import attrs

from .._core import OperatorSubscriber, Publisher, Subscriber, Subscription, require_not_none

__all__ = ("ElapsedPublisher",)

T = TypeVar("T")


@final
@attrs.frozen
class ElapsedPublisher(Publisher[tuple[float, T]], Generic[T]):
    """What `Flux.elapsed` (``since_previous``) and `Flux.timestamp` return."""

    source: Publisher[T]
    since_previous: bool

    def subscribe(self, subscriber: Subscriber[tuple[float, T]]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        operator = (_ElapsedSubscriber if self.since_previous else _TimestampSubscriber)(subscriber)
        self.source.subscribe(operator)


@attrs.define(eq=False)
class _ClockSubscriber(OperatorSubscriber[T, tuple[float, T]]):
    _clock: Callable[[], float] = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        loop = self._loop
        self._clock = time.monotonic if loop is None else loop.time


@final
@attrs.define(eq=False)
class _TimestampSubscriber(_ClockSubscriber[T]):
    def on_next(self, item: T) -> None:
        self._next((self._clock(), item))


@final
@attrs.define(eq=False)
class _ElapsedSubscriber(_ClockSubscriber[T]):
    _last: float = attrs.field(default=0.0, init=False)

    def on_subscribe(self, subscription: Subscription) -> None:
        self._last = self._clock()
        super().on_subscribe(subscription)

    def on_next(self, item: T) -> None:
        now = self._clock()
        last, self._last = self._last, now
        self._next((now - last, item))
