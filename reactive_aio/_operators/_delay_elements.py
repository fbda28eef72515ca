"""``delay_elements``: every item is emitted *delay* seconds after it arrived, one at a time.

Backpressure: upstream is asked for one item at a time, only while downstream has demand;
the next one is requested after the delayed item was emitted (so items are spaced by at
least *delay*).
Errors: completion and errors wait for the item in flight to be emitted, then pass on.
Loop: one timer handle per item in flight (never more than one at a time).
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
    require_not_none,
    require_running_loop,
)

__all__ = ("DelayElementsPublisher",)

T = TypeVar("T")

_COMPLETE = object()
"""The terminal signal held behind an item in flight, when it is completion."""


@final
@attrs.frozen
class DelayElementsPublisher(Publisher[T], Generic[T]):
    """What `Flux.delay_elements` returns."""

    source: Publisher[T]
    delay: float

    def __attrs_post_init__(self) -> None:
        if self.delay < 0:
            raise ValueError(f"delay_elements delay must be >= 0 seconds, got {self.delay}")

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        loop = require_running_loop("delay_elements")
        operator = _DelayElementsSubscriber(subscriber, delay=self.delay)
        operator.deadline = Deadline(loop, operator.fire)
        self.source.subscribe(operator)


@final
@attrs.define(eq=False)
class _DelayElementsSubscriber(OperatorSubscriber[T, T]):
    _delay: float = attrs.field(kw_only=True, alias="delay")
    deadline: Deadline | None = attrs.field(default=None, init=False)
    _demand: int = attrs.field(default=0, init=False)
    _in_flight: bool = attrs.field(default=False, init=False)
    _item: T | None = attrs.field(default=None, init=False)
    _terminal: object | None = attrs.field(default=None, init=False)

    def on_subscribe(self, subscription: Subscription) -> None:
        super().on_subscribe(subscription)
        self._pull()

    def on_next(self, item: T) -> None:
        if self._done or self._item is not None:
            return
        self._item = item
        assert self.deadline is not None
        self.deadline.arm_in(self._delay)

    def on_complete(self) -> None:
        if self._item is not None:
            self._terminal = _COMPLETE
        else:
            self._stop_timer()
            super().on_complete()

    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        if self._item is not None and not self._done:
            self._terminal = error
        else:
            self._stop_timer()
            super().on_error(error)

    def _request(self, n: int) -> None:
        if self._done:
            return
        if type(n) is not int or n <= 0:
            upstream = self._upstream
            if upstream is not None:
                upstream.request(n)  # upstream signals the rule 3.9 error
            return
        self._demand = add_demand(self._demand, n)
        self._pull()

    def cancel(self) -> None:
        if self._hand_over_cancel():
            return
        self._stop_timer()
        self._item = None
        super().cancel()

    def fire(self) -> None:
        item, self._item = self._item, None
        if item is None or self._done:
            return
        self._in_flight = False
        self._demand = produced(self._demand, 1)
        self._next(item)
        if self._in_flight or self._done:
            return  # on_next requested the next item: the terminal (if any) is behind it
        terminal, self._terminal = self._terminal, None
        if terminal is _COMPLETE:
            super().on_complete()
        elif isinstance(terminal, BaseException):
            super().on_error(terminal)
        else:
            self._pull()

    def _pull(self) -> None:
        upstream = self._upstream
        if (
            upstream is not None
            and not self._in_flight
            and self._demand > 0
            and self._terminal is None
            and not self._done
        ):
            self._in_flight = True
            upstream.request(1)

    def _stop_timer(self) -> None:
        if self.deadline is not None:
            self.deadline.disarm()
