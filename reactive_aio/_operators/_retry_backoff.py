"""``retry_backoff``: on error, resubscribe after an exponentially growing, jittered pause.

The n-th retry (n = 0, 1, …) waits ``min(first_backoff * 2**n, max_backoff)`` seconds,
spread uniformly by ``± jitter`` of itself and clamped to ``[first_backoff, max_backoff]``.
At most *max_attempts* retries are made; each resubscribes the source afresh (a cold
source starts over, so items already emitted may come again).
Backpressure: demand not yet served is requested again from each new subscription;
``request(n <= 0)`` fails the stream here (it is not retried).
Errors: once the retries are exhausted the last error passes on, with a note saying so.
Loop: one timer handle per pause, cancelled on ``cancel``.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from typing import Generic, TypeVar, final

import attrs

from .._core import (
    OperatorSubscriber,
    Publisher,
    Subscriber,
    Subscription,
    add_demand,
    produced,
    request_error,
    require_not_none,
    require_running_loop,
)

__all__ = ("RetryBackoffPublisher", "backoff_delay")

T = TypeVar("T")


def backoff_delay(
    attempt: int,
    first_backoff: float,
    max_backoff: float,
    jitter: float,
    uniform: Callable[[float, float], float] = random.uniform,
) -> float:
    """The pause before retry number *attempt* (0-based); see the module docstring."""
    base = min(first_backoff * 2.0**attempt, max_backoff)
    spread = base * jitter
    pause = base + uniform(-spread, spread) if spread else base
    return min(max(pause, first_backoff), max_backoff)


@final
@attrs.frozen
class RetryBackoffPublisher(Publisher[T], Generic[T]):
    """What `Flux.retry_backoff` returns."""

    source: Publisher[T]
    max_attempts: int
    first_backoff: float
    max_backoff: float
    jitter: float = 0.5

    def __attrs_post_init__(self) -> None:
        if self.max_attempts < 0:
            raise ValueError(f"retry_backoff max_attempts must be >= 0, got {self.max_attempts}")
        if not 0 <= self.first_backoff <= self.max_backoff:
            raise ValueError(
                "retry_backoff needs 0 <= first_backoff <= max_backoff, got "
                f"{self.first_backoff} and {self.max_backoff}"
            )
        if not 0 <= self.jitter <= 1:
            raise ValueError(f"retry_backoff jitter must be in [0, 1], got {self.jitter}")

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        loop = require_running_loop("retry_backoff")
        self.source.subscribe(_RetrySubscriber(subscriber, loop=loop, spec=self))


@final
@attrs.define(eq=False)
class _RetrySubscriber(OperatorSubscriber[T, T]):
    _timer_loop: asyncio.AbstractEventLoop = attrs.field(kw_only=True, alias="loop")
    _spec: RetryBackoffPublisher[T] | None = attrs.field(kw_only=True, alias="spec")
    _attempt: int = attrs.field(default=0, init=False)
    _demand: int = attrs.field(default=0, init=False)
    _started: bool = attrs.field(default=False, init=False)
    _handle: asyncio.TimerHandle | None = attrs.field(default=None, init=False)

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "2.13", "on_subscribe's subscription")
        if self._upstream is not None or self._done:
            subscription.cancel()
            return
        self._upstream = subscription
        if not self._started:
            self._started = True
            self._subscribe_downstream()
        elif self._demand:
            subscription.request(self._demand)

    def on_next(self, item: T) -> None:
        self._demand = produced(self._demand, 1)
        self._next(item)

    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        spec = self._spec
        if self._done or spec is None:
            super().on_error(error)
            return
        if self._attempt >= spec.max_attempts:
            if spec.max_attempts:
                error.add_note(f"retry_backoff: gave up after {spec.max_attempts} retries")
            super().on_error(error)
            return
        pause = backoff_delay(self._attempt, spec.first_backoff, spec.max_backoff, spec.jitter)
        self._attempt += 1
        self._upstream = None
        self._handle = self._timer_loop.call_later(pause, self._resubscribe)

    def _request(self, n: int) -> None:
        if self._done:
            return
        if type(n) is not int or n <= 0:  # fail here: upstream's rule 3.9 error is not retried
            self._stop_timer()
            self._fail(request_error(n))
            return
        self._demand = add_demand(self._demand, n)
        upstream = self._upstream
        if upstream is not None:
            upstream.request(n)

    def cancel(self) -> None:
        if self._hand_over_cancel():
            return
        self._stop_timer()
        super().cancel()

    def _stop_timer(self) -> None:
        self._spec = None
        handle = self._handle
        if handle is not None:
            self._handle = None
            handle.cancel()

    def _resubscribe(self) -> None:
        self._handle = None
        spec = self._spec
        if spec is not None and not self._done:
            spec.source.subscribe(self)
