"""``debounce``: emit an item only after *timeout* seconds without a newer one.

Backpressure: upstream is requested without bound (the operator drops by design); items
that became due while downstream has no demand are held, up to `HOLD` of them, then the
stream fails with `MissingBackpressureError`.
Errors: an upstream error drops the item still waiting for its quiet period and is
signalled after the due items already held; on completion the waiting item is emitted first.
Loop: one `Deadline`, pushed later by each item; at most one timer handle per quiet period.
"""

from __future__ import annotations

from typing import Generic, TypeVar, final

import attrs

from .._core import (
    MAX_DEMAND,
    BufferDrain,
    Deadline,
    Publisher,
    Subscriber,
    Subscription,
    require_not_none,
    require_running_loop,
)

__all__ = ("HOLD", "DebouncePublisher")

T = TypeVar("T")

HOLD = 256
"""Due items held for a downstream without demand before failing."""


@final
@attrs.frozen
class DebouncePublisher(Publisher[T], Generic[T]):
    """What `Flux.debounce` returns."""

    source: Publisher[T]
    timeout: float

    def __attrs_post_init__(self) -> None:
        if self.timeout < 0:
            raise ValueError(f"debounce timeout must be >= 0 seconds, got {self.timeout}")

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        loop = require_running_loop("debounce")
        operator = _DebounceSubscriber(
            subscriber, timeout=self.timeout, capacity=HOLD, what="debounce"
        )
        operator.deadline = Deadline(loop, operator.fire)
        self.source.subscribe(operator)


@final
@attrs.define(eq=False)
class _DebounceSubscriber(BufferDrain[T]):
    _timeout: float = attrs.field(kw_only=True, alias="timeout")
    deadline: Deadline | None = attrs.field(default=None, init=False)
    _latest: T | None = attrs.field(default=None, init=False)

    def _subscribed(self, upstream: Subscription) -> None:
        self.start()
        if not self.done:
            upstream.request(MAX_DEMAND)

    def on_next(self, item: T) -> None:
        if item is None:
            require_not_none(item, "2.13", "on_next's item")
        self._latest = item
        assert self.deadline is not None
        self.deadline.arm_in(self._timeout)

    def fire(self) -> None:
        latest, self._latest = self._latest, None
        if latest is not None:
            self.push(latest)

    def _ending(self, error: BaseException | None) -> None:
        if self.deadline is not None:
            self.deadline.disarm()
        latest, self._latest = self._latest, None
        if error is None and latest is not None:
            self.push(latest)
        self.finish(error)

    def _release(self) -> None:
        self._latest = None
        if self.deadline is not None:
            self.deadline.disarm()
        super()._release()
