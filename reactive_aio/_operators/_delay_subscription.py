"""``delay_subscription``: subscribe upstream only after *delay* seconds.

Backpressure: demand requested during the delay is accumulated and requested from
upstream as soon as it subscribes; afterwards ``request`` passes through.
Errors: upstream errors pass through; a bad ``request`` (rule 3.9) made during the delay
fails the stream once the delay is over, when the error cannot nest in another signal.
Loop: one timer handle for the delay, cancelled on ``cancel``.
"""

from __future__ import annotations

import asyncio
from typing import Generic, TypeVar, final

import attrs

from .._core import (
    InvalidRequestError,
    OperatorSubscriber,
    Publisher,
    Subscriber,
    Subscription,
    add_demand,
    request_error,
    require_not_none,
    require_running_loop,
)

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
        operator._subscribe_downstream()
        if not operator.done:
            operator.handle = loop.call_later(self.delay, operator.go)


@final
@attrs.define(eq=False)
class _DelaySubscriber(OperatorSubscriber[T, T]):
    _source: Publisher[T] | None = attrs.field(kw_only=True, alias="source")
    handle: asyncio.TimerHandle | None = attrs.field(default=None, init=False)
    _pending: int = attrs.field(default=0, init=False)
    _bad_request: InvalidRequestError | None = attrs.field(default=None, init=False)
    """The error of a bad ``request`` made during the delay (rule 3.9)."""

    @property
    def done(self) -> bool:
        return self._done

    def go(self) -> None:
        self.handle = None
        source, self._source = self._source, None
        if source is not None and not self._done:
            source.subscribe(self)

    def on_next(self, item: T) -> None:
        self._next(item)

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "2.13", "on_subscribe's subscription")
        if self._upstream is not None or self._done:
            subscription.cancel()
            return
        self._upstream = subscription  # downstream saw on_subscribe already
        if self._bad_request is not None:
            self._fail(self._bad_request)  # cancels the new upstream, then on_error
        elif self._pending:
            subscription.request(self._pending)

    def _request(self, n: int) -> None:
        if self._done:
            return
        upstream = self._upstream
        if upstream is not None:
            upstream.request(n)
        elif type(n) is not int or n <= 0:
            self._bad_request = request_error(n)
        else:
            self._pending = add_demand(self._pending, n)

    def cancel(self) -> None:
        if self._hand_over_cancel():
            return
        handle = self.handle
        if handle is not None:
            self.handle = None
            handle.cancel()
        self._source = None
        super().cancel()
