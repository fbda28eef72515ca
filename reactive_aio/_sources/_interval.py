"""``Flux.interval``: ``0, 1, 2, …`` one every *period* seconds on the loop clock.

Backpressure: none possible (time does not wait); a tick that finds no outstanding demand
fails the stream with `MissingBackpressureError`, as in Reactor. Request enough up front
(``Flux.subscribe(prefetch=…)`` replenishes) or put a backpressure operator after it.
Errors: only `MissingBackpressureError`; never completes on its own.
Loop: ticks at ``start + delay + k * period`` (no drift) with one timer handle per tick.
"""

from __future__ import annotations

import asyncio
from typing import final

import attrs

from .._core import (
    DrainSubscription,
    MissingBackpressureError,
    Publisher,
    Subscriber,
    require_not_none,
    require_running_loop,
)

__all__ = ("IntervalPublisher",)


@final
@attrs.frozen
class IntervalPublisher(Publisher[int]):
    """Cold: each subscriber gets its own ticks, starting from 0."""

    period: float
    delay: float | None = None

    def __attrs_post_init__(self) -> None:
        if not self.period > 0:
            raise ValueError(f"interval period must be > 0 seconds, got {self.period}")
        if self.delay is not None and self.delay < 0:
            raise ValueError(f"interval delay must be >= 0 seconds, got {self.delay}")

    def subscribe(self, subscriber: Subscriber[int]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        loop = require_running_loop("Flux.interval")
        first = loop.time() + (self.period if self.delay is None else self.delay)
        subscription = _IntervalSubscription(subscriber, period=self.period, next_at=first)
        subscription.start()
        if not subscription.done:
            subscription.schedule(loop)


@final
@attrs.define(eq=False)
class _IntervalSubscription(DrainSubscription[int]):
    _period: float = attrs.field(kw_only=True, alias="period")
    _next_at: float = attrs.field(kw_only=True, alias="next_at")
    _count: int = attrs.field(default=0, init=False)
    _due: bool = attrs.field(default=False, init=False)
    _handle: asyncio.TimerHandle | None = attrs.field(default=None, init=False)

    def schedule(self, loop: asyncio.AbstractEventLoop) -> None:
        self._handle = loop.call_at(self._next_at, self._tick)

    def _tick(self) -> None:
        self._handle = None
        if self.done:
            return
        if self._requested == 0:
            self._error(
                MissingBackpressureError(
                    f"interval: tick {self._count} is due but the subscriber has no demand"
                )
            )
            return
        self._due = True
        self._drain()
        if not self.done and self._loop is not None:
            self._next_at += self._period
            self.schedule(self._loop)

    def _emit(self, limit: int) -> int:
        if not self._due or not limit:
            return 0
        self._due = False
        downstream = self._downstream
        assert downstream is not None
        count = self._count
        self._count = count + 1
        downstream.on_next(count)
        return 1

    def _release(self) -> None:
        handle = self._handle
        if handle is not None:
            self._handle = None
            handle.cancel()
