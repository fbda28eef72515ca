"""``skip_for``: drop the items of the first *duration* seconds, pass the rest.

Named apart from a count-based ``skip(n)`` on purpose: ``skip_for(2.0)`` is two seconds.
Backpressure: pass-through; each dropped item is replaced by a ``request(1)`` upstream.
Errors: upstream errors and completion pass through, also during the skipped period.
Loop: reads the loop clock per item until the period is over; schedules nothing.
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

__all__ = ("SkipForPublisher",)

T = TypeVar("T")


@final
@attrs.frozen
class SkipForPublisher(Publisher[T], Generic[T]):
    """What `Flux.skip_for` returns."""

    source: Publisher[T]
    duration: float

    def __attrs_post_init__(self) -> None:
        if self.duration < 0:
            raise ValueError(f"skip_for duration must be >= 0 seconds, got {self.duration}")

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        loop = require_running_loop("skip_for")
        self.source.subscribe(
            _SkipForSubscriber(subscriber, loop=loop, until=loop.time() + self.duration)
        )


@final
@attrs.define(eq=False)
class _SkipForSubscriber(DroppingSubscriber[T, T]):
    _clock: asyncio.AbstractEventLoop | None = attrs.field(kw_only=True, alias="loop")
    _until: float = attrs.field(kw_only=True, alias="until")

    def on_next(self, item: T) -> None:
        clock = self._clock
        if clock is not None:
            if clock.time() + RESOLUTION < self._until:
                self._drop()
                return
            self._clock = None  # the period is over: no more clock reads
        self._next(item)
