"""``delay``: shift every signal (items, completion, error) *delay* seconds later.

The spacing between signals is kept: an item that arrived at ``t`` is emitted at
``t + delay``.
Backpressure: pass-through; upstream never emits beyond downstream's demand, so the items
waiting for their time are covered by demand already granted.
Errors: an upstream error is delayed like any other signal (items before it arrive first).
Loop: one timer handle armed for the earliest pending signal.
"""

from __future__ import annotations

from collections import deque
from typing import Generic, TypeVar, final

import attrs

from .._core import (
    RESOLUTION,
    Deadline,
    OperatorSubscriber,
    Publisher,
    Subscriber,
    require_not_none,
    require_running_loop,
)

__all__ = ("DelayPublisher",)

T = TypeVar("T")

_COMPLETE = object()


@final
@attrs.frozen
class DelayPublisher(Publisher[T], Generic[T]):
    """What `Flux.delay` returns."""

    source: Publisher[T]
    delay: float

    def __attrs_post_init__(self) -> None:
        if self.delay < 0:
            raise ValueError(f"delay must be >= 0 seconds, got {self.delay}")

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        loop = require_running_loop("delay")
        operator = _DelaySubscriber(subscriber, delay=self.delay)
        operator.deadline = Deadline(loop, operator.fire)
        self.source.subscribe(operator)


@final
@attrs.define(eq=False)
class _DelaySubscriber(OperatorSubscriber[T, T]):
    _delay: float = attrs.field(kw_only=True, alias="delay")
    deadline: Deadline | None = attrs.field(default=None, init=False)
    _pending: deque[tuple[float, object]] = attrs.field(factory=deque, init=False)
    """(due time, item or terminal) in arrival order, hence in due order."""

    def on_next(self, item: T) -> None:
        self._schedule(item)

    def on_complete(self) -> None:
        self._schedule(_COMPLETE)

    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        self._schedule(error)

    def cancel(self) -> None:
        if self._hand_over_cancel():
            return
        self._stop()
        super().cancel()

    def fire(self) -> None:
        deadline = self.deadline
        assert deadline is not None
        pending = self._pending
        horizon = deadline.loop.time()
        while pending and not self._done:
            due, signal = pending[0]
            if due - horizon > RESOLUTION:
                deadline.arm_at(due)
                return
            pending.popleft()
            if signal is _COMPLETE:
                super().on_complete()
            elif isinstance(signal, BaseException):
                super().on_error(signal)
            else:
                self._next(signal)

    def _schedule(self, signal: object) -> None:
        if self._done:
            return
        deadline = self.deadline
        assert deadline is not None
        due = deadline.loop.time() + self._delay
        self._pending.append((due, signal))
        if not deadline.armed:
            deadline.arm_at(due)

    def _stop(self) -> None:
        self._pending.clear()
        if self.deadline is not None:
            self.deadline.disarm()
