"""``sample`` / ``throttle_last``: emit the latest item seen since the previous sample.

A sample is taken every *period* seconds, or, given a *sampler* publisher, at each of its
items (Reactor's ``sample(Publisher)``). Samples with nothing new emit nothing; an item is
emitted at most once. The sampler's completion ends the stream like the source's (the latest
unsampled item, then completion; the source cancelled).

Backpressure: upstream (and the sampler) are requested without bound (the operator drops by
design); sampled items that find no downstream demand are held, up to `HOLD`, then the stream
fails with `MissingBackpressureError`.
Errors: an upstream error drops the unsampled item and is signalled after the sampled items
already held; on completion the latest unsampled item is emitted first. A sampler's error
cancels upstream and goes the same way.
Loop: with *period*, ticks at ``start + k * period`` with one timer handle per tick.
"""

from __future__ import annotations

import asyncio
from typing import Generic, TypeVar, final

import attrs

from .._core import (
    Companion,
    Publisher,
    Subscriber,
    require_not_none,
    require_publisher,
    require_running_loop,
    stop_companion,
)
from ._debounce import HOLD, LatestHolder

__all__ = ("SamplePublisher", "SamplerPublisher")

T = TypeVar("T")


@final
@attrs.frozen
class SamplePublisher(Publisher[T], Generic[T]):
    """What `Flux.sample` (given a period) and `Flux.throttle_last` return."""

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
@attrs.frozen
class SamplerPublisher(Publisher[T], Generic[T]):
    """What `Flux.sample` returns given a sampler publisher."""

    source: Publisher[T]
    sampler: Publisher[object]

    def __attrs_post_init__(self) -> None:
        require_publisher(self.sampler, "sample")

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(
            _SamplerSubscriber(subscriber, sampler=self.sampler, capacity=HOLD, what="sample")
        )


@final
@attrs.define(eq=False)
class _SampleSubscriber(LatestHolder[T]):
    _clock: asyncio.AbstractEventLoop = attrs.field(kw_only=True, alias="clock")
    """The running loop (the drain's own may be handed over to): the ticks' timer."""
    _period: float = attrs.field(kw_only=True, alias="period")
    _next_at: float = attrs.field(default=0.0, init=False)
    _handle: asyncio.TimerHandle | None = attrs.field(default=None, init=False)

    def _started(self) -> None:
        self._next_at = self._clock.time() + self._period
        self._handle = self._clock.call_at(self._next_at, self._tick)

    def _tick(self) -> None:
        self._next_at += self._period
        self._handle = self._clock.call_at(self._next_at, self._tick)
        self.fire()

    def _stop(self) -> None:
        handle = self._handle
        if handle is not None:
            self._handle = None
            handle.cancel()


@final
@attrs.define(eq=False)
class _SamplerSubscriber(LatestHolder[T]):
    _sampler: Publisher[object] | None = attrs.field(kw_only=True, alias="sampler")
    _companion: Companion | None = attrs.field(default=None, init=False)

    def _started(self) -> None:
        sampler, self._sampler = self._sampler, None
        if sampler is not None:
            companion = self._companion = Companion(self.fire, self._sampler_ended)
            companion.follow(sampler)

    def _sampler_ended(self, error: BaseException | None) -> None:
        self._drop_upstream()
        self._ending(error)

    def _stop(self) -> None:
        stop_companion(self._companion)
