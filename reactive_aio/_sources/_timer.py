"""``Flux.timer``: the single item ``0`` after *delay* seconds, then completion.

Backpressure: if no demand is outstanding when the delay elapses, the item is held until
the first request (it is a single item, so holding it is bounded).
Errors: none of its own.
Loop: one timer handle, cancelled on ``cancel``.
"""

from __future__ import annotations

import asyncio
from typing import final

import attrs

from .._core import DrainSubscription, Publisher, Subscriber, require_not_none, require_running_loop

__all__ = ("TimerPublisher",)


@final
@attrs.frozen
class TimerPublisher(Publisher[int]):
    """Cold: the delay starts at each subscribe."""

    delay: float

    def __attrs_post_init__(self) -> None:
        if self.delay < 0:
            raise ValueError(f"timer delay must be >= 0 seconds, got {self.delay}")

    def subscribe(self, subscriber: Subscriber[int]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        loop = require_running_loop("Flux.timer")
        subscription = _TimerSubscription(subscriber)
        subscription.start()
        if not subscription.done:
            subscription.handle = loop.call_later(self.delay, subscription.fire)


@final
@attrs.define(eq=False)
class _TimerSubscription(DrainSubscription[int]):
    handle: asyncio.TimerHandle | None = attrs.field(default=None, init=False)
    _due: bool = attrs.field(default=False, init=False)

    def fire(self) -> None:
        self.handle = None
        self._due = True
        self._drain()

    def _emit(self, limit: int) -> int:
        if not self._due or not limit:
            return 0
        downstream = self._downstream
        assert downstream is not None
        downstream.on_next(0)
        if not self.done:
            self._complete()
        return 1

    def _release(self) -> None:
        handle = self.handle
        if handle is not None:
            self.handle = None
            handle.cancel()
