"""``timeout``: fail, or switch to a fallback, when an item takes longer than *seconds*.

The first item must arrive within *seconds* of subscribing, and every later item within
*seconds* of the one before it.
Backpressure: pass-through; demand not yet served when switching is requested from the
fallback.
Errors: without a fallback, upstream is cancelled and ``on_error(TimeoutError)`` follows;
upstream errors pass through. After a switch no timeout applies to the fallback.
Loop: one `Deadline` pushed later by each item (at most one timer handle per period).
"""

from __future__ import annotations

from typing import Generic, TypeVar, final

import attrs

from .._core import (
    Deadline,
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

__all__ = ("TimeoutPublisher",)

T = TypeVar("T")


@final
@attrs.frozen
class TimeoutPublisher(Publisher[T], Generic[T]):
    """What `Flux.timeout` returns."""

    source: Publisher[T]
    seconds: float
    fallback: Publisher[T] | None = None

    def __attrs_post_init__(self) -> None:
        if not self.seconds > 0:
            raise ValueError(f"timeout must be > 0 seconds, got {self.seconds}")

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        loop = require_running_loop("timeout")
        operator = _TimeoutSubscriber(subscriber, seconds=self.seconds, fallback=self.fallback)
        operator.deadline = Deadline(loop, operator.expired)
        self.source.subscribe(operator)


@final
@attrs.define(eq=False)
class _TimeoutSubscriber(OperatorSubscriber[T, T]):
    _seconds: float = attrs.field(kw_only=True, alias="seconds")
    _fallback: Publisher[T] | None = attrs.field(kw_only=True, alias="fallback")
    deadline: Deadline | None = attrs.field(default=None, init=False)
    _demand: int = attrs.field(default=0, init=False)
    _started: bool = attrs.field(default=False, init=False)
    _switched: bool = attrs.field(default=False, init=False)

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "2.13", "on_subscribe's subscription")
        if self._upstream is not None or self._done:
            subscription.cancel()
            return
        self._upstream = subscription
        if not self._started:
            self._started = True
            self._subscribe_downstream()
            if not self._done and self.deadline is not None:
                self.deadline.arm_in(self._seconds)
        elif self._demand:
            subscription.request(self._demand)  # the fallback takes over unserved demand

    def on_next(self, item: T) -> None:
        if self._done:
            return
        if not self._switched:
            assert self.deadline is not None
            self.deadline.arm_in(self._seconds)
        self._demand = produced(self._demand, 1)
        self._next(item)

    def on_complete(self) -> None:
        self._stop_timer()
        super().on_complete()

    def on_error(self, error: BaseException) -> None:
        self._stop_timer()
        super().on_error(error)

    def _request(self, n: int) -> None:
        if self._done:
            return
        valid = type(n) is int and n > 0
        if valid:
            self._demand = add_demand(self._demand, n)
        upstream = self._upstream
        if upstream is not None:
            upstream.request(n)  # a bad n fails upstream (rule 3.9)
        elif not valid:
            self._fail(request_error(n))

    def cancel(self) -> None:
        if self._hand_over_cancel():
            return
        self._stop_timer()
        self._fallback = None
        super().cancel()

    def expired(self) -> None:
        if self._done or self._switched:
            return
        fallback = self._fallback
        if fallback is None:
            self._fail(TimeoutError(f"timeout: no item within {self._seconds} s"))
            return
        self._switched = True
        self._fallback = None
        upstream, self._upstream = self._upstream, None
        if upstream is not None:
            upstream.cancel()
        fallback.subscribe(self)

    def _stop_timer(self) -> None:
        if self.deadline is not None:
            self.deadline.disarm()
