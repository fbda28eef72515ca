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
    ArbiterSubscriber,
    Deadline,
    Publisher,
    Subscriber,
    Subscription,
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
class _TimeoutSubscriber(ArbiterSubscriber[T]):
    _seconds: float = attrs.field(kw_only=True, alias="seconds")
    _fallback: Publisher[T] | None = attrs.field(kw_only=True, alias="fallback")
    deadline: Deadline | None = attrs.field(default=None, init=False)
    """Armed while the source runs; None once the stream ended or switched to the fallback."""

    def on_subscribe(self, subscription: Subscription) -> None:
        first = not self._started
        super().on_subscribe(subscription)
        deadline = self.deadline
        if first and deadline is not None and not self.done:
            deadline.arm_in(self._seconds)

    def on_next(self, item: T) -> None:
        deadline = self.deadline
        if deadline is not None:
            deadline.arm_in(self._seconds)
        super().on_next(item)

    def expired(self) -> None:
        if self.done:
            return
        fallback, self._fallback = self._fallback, None
        self.deadline = None
        self._cancel_upstream()
        if fallback is None:
            self._finish_error(TimeoutError(f"timeout: no item within {self._seconds} s"))
        else:
            self._switch_to(fallback)

    def _on_end(self) -> None:
        deadline, self.deadline = self.deadline, None
        self._fallback = None
        if deadline is not None:
            deadline.disarm()
