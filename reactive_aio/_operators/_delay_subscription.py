"""``delay_subscription``: subscribe upstream only after *delay* seconds.

Backpressure: demand requested during the delay is accumulated and requested from
upstream as soon as it subscribes; afterwards ``request`` passes through.
Errors: upstream errors pass through; a bad ``request`` (rule 3.9) fails the stream at once,
also during the delay (after ``on_subscribe`` returned, when made inside it).
Loop: one timer handle for the delay, cancelled on ``cancel``.
"""

from __future__ import annotations

import asyncio
from typing import Generic, TypeVar, final

import attrs

from .._core import ArbiterSubscriber, Publisher, Subscriber, require_not_none, require_running_loop

__all__ = ("DelaySubscriptionPublisher",)

T = TypeVar("T")


@final
@attrs.frozen
class DelaySubscriptionPublisher(Publisher[T], Generic[T]):
    """What `Flux.delay_subscription` returns."""

    source: Publisher[T]
    delay: float

    def __attrs_post_init__(self) -> None:
        if self.delay < 0:
            raise ValueError(f"delay_subscription delay must be >= 0 seconds, got {self.delay}")

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        loop = require_running_loop("delay_subscription")
        operator = _DelaySubscriber(subscriber, source=self.source)
        operator.start()
        if not operator.done:
            operator.handle = loop.call_later(self.delay, operator.go)


@final
@attrs.define(eq=False)
class _DelaySubscriber(ArbiterSubscriber[T]):
    _source: Publisher[T] | None = attrs.field(kw_only=True, alias="source")
    handle: asyncio.TimerHandle | None = attrs.field(default=None, init=False)

    def go(self) -> None:
        self.handle = None
        source, self._source = self._source, None
        if source is not None:
            self._switch_to(source)

    def _on_end(self) -> None:
        handle, self.handle = self.handle, None
        self._source = None
        if handle is not None:
            handle.cancel()
