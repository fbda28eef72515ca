"""``sample`` / ``throttle_last``: every *period* seconds, emit the latest item seen in it.

Periods in which nothing arrived emit nothing; an item is emitted at most once.
Backpressure: upstream is requested without bound (the operator drops by design); sampled
items that find no downstream demand are held, up to `HOLD`, then the stream fails with
`MissingBackpressureError`.
Errors: an upstream error drops the unsampled item and is signalled after the sampled items
already held; on completion the latest unsampled item is emitted first.
Loop: ticks at ``start + k * period`` with one timer handle per tick.
"""

from __future__ import annotations

import asyncio
from typing import Generic, TypeVar, final

import attrs

from .._core import (
    MAX_DEMAND,
    BufferDrain,
    Publisher,
    Subscriber,
    Subscription,
    require_not_none,
    require_running_loop,
)
from ._debounce import HOLD

__all__ = ("SamplePublisher",)

T = TypeVar("T")


@final
@attrs.frozen
class SamplePublisher(Publisher[T], Generic[T]):
    """What `Flux.sample` and `Flux.throttle_last` return."""

    source: Publisher[T]
    period: float

    def __attrs_post_init__(self) -> None:
        if not self.period > 0:
            raise ValueError(f"sample period must be > 0 seconds, got {self.period}")

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        loop = require_running_loop("sample")
        self.source.subscribe(
            _SampleSubscriber(
                subscriber, clock=loop, period=self.period, capacity=HOLD, what="sample"
            )
        )


@final
@attrs.define(eq=False)
class _SampleSubscriber(BufferDrain[T]):
    _clock: asyncio.AbstractEventLoop = attrs.field(kw_only=True, alias="clock")
    """The running loop (the drain's own may be handed over to): the ticks' timer."""
    _period: float = attrs.field(kw_only=True, alias="period")
    _latest: T | None = attrs.field(default=None, init=False)
    _next_at: float = attrs.field(default=0.0, init=False)
    _handle: asyncio.TimerHandle | None = attrs.field(default=None, init=False)

    def _subscribed(self, upstream: Subscription) -> None:
        self.start()
        if self.done:
            return
        self._next_at = self._clock.time() + self._period
        self._handle = self._clock.call_at(self._next_at, self._tick)
        upstream.request(MAX_DEMAND)

    def on_next(self, item: T) -> None:
        if item is None:
            require_not_none(item, "2.13", "on_next's item")
        self._latest = item

    def _tick(self) -> None:
        latest, self._latest = self._latest, None
        self._next_at += self._period
        self._handle = self._clock.call_at(self._next_at, self._tick)
        if latest is not None:
            self.push(latest)

    def _ending(self, error: BaseException | None) -> None:
        self._stopped_timer()
        latest, self._latest = self._latest, None
        if error is None and latest is not None:
            self.push(latest)
        self.finish(error)

    def _release(self) -> None:
        self._latest = None
        self._stopped_timer()
        super()._release()

    def _stopped_timer(self) -> None:
        handle = self._handle
        if handle is not None:
            self._handle = None
            handle.cancel()
