"""`Overflow`: what a push source or a backpressure operator does with items nobody asked for.

An item that arrives without downstream demand waits in a buffer of ``max_size`` items; when
the buffer is full, ``then`` decides: ``"drop_oldest"`` evicts the oldest buffered item,
``"drop_latest"`` drops the new one, ``"error"`` fails the stream with
`MissingBackpressureError` after the buffered items. `Overflow.DROP` is a zero-size buffer
that drops, `Overflow.LATEST` keeps only the newest item, `Overflow.ERROR` fails at once.

`OverflowDrain` applies a policy on top of `BufferDrain` and keeps exact counts: every item
offered is delivered, dropped, or still buffered (``offered == delivered + dropped +
buffered``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Generic, Literal, TypeVar, final

import attrs

from .._core import (
    MAX_DEMAND,
    MissingBackpressureError,
    Subscriber,
    Subscription,
    current_loop,
    hand_over,
    require_not_none,
)
from .._core._buffer_drain import BufferDrain

__all__ = ("Overflow", "OverflowDrain", "OverflowSubscriber", "OverflowThen")

T = TypeVar("T")

OverflowThen = Literal["drop_oldest", "drop_latest", "error"]
"""What a full buffer does with one more item."""

_THEN: tuple[OverflowThen, ...] = ("drop_oldest", "drop_latest", "error")


@final
@attrs.frozen
class Overflow:
    """An overflow policy: a buffer of *max_size* items and what to do when it is full."""

    max_size: int
    then: OverflowThen = "error"

    DROP: ClassVar[Overflow]
    """Deliver an item only when there is demand for it; drop it otherwise."""
    LATEST: ClassVar[Overflow]
    """Keep only the newest undelivered item."""
    ERROR: ClassVar[Overflow]
    """Fail with `MissingBackpressureError` as soon as an item arrives without demand."""

    def __attrs_post_init__(self) -> None:
        if self.max_size < 0:
            raise ValueError(f"overflow buffer max_size must be >= 0, got {self.max_size}")
        if self.then not in _THEN:
            raise ValueError(f"overflow then must be one of {_THEN}, got {self.then!r}")

    @staticmethod
    def BUFFER(max_size: int, *, then: OverflowThen = "error") -> Overflow:
        """Buffer up to *max_size* undelivered items, then apply *then*."""
        return Overflow(max_size, then)


Overflow.DROP = Overflow(0, "drop_latest")
Overflow.LATEST = Overflow(1, "drop_oldest")
Overflow.ERROR = Overflow(0, "error")


@attrs.define(eq=False)
class OverflowDrain(BufferDrain[T], Generic[T]):
    """A synchronous `BufferDrain` whose `offer` applies an `Overflow` policy.

    Subclasses override `_cancel_source` to stop their producer when the stream fails.
    """

    _policy: Overflow = attrs.field(kw_only=True, alias="policy")
    _on_dropped: Callable[[Any], object] | None = attrs.field(
        default=None, kw_only=True, alias="on_dropped"
    )
    offered: int = attrs.field(default=0, init=False)
    """Items offered while the stream was live."""
    dropped: int = attrs.field(default=0, init=False)
    """Items dropped by the policy (an item that caused an overflow error counts as dropped)."""

    def offer(self, item: T) -> bool:
        """Offer *item*: deliver it, buffer it, or apply the policy. False if it was dropped."""
        if self._finished or self._done:
            return False
        self.offered += 1
        queue = self._queue
        queue.append(item)
        self._drain()
        policy = self._policy
        if len(queue) <= policy.max_size:
            return True
        then = policy.then
        lost = queue.popleft() if then == "drop_oldest" else queue.pop()
        self.dropped += 1
        callback = self._on_dropped
        if callback is not None:
            try:
                callback(lost)
            except Exception as exc:  # user code fails the stream, never the producer
                self._cancel_source()
                self.finish(exc)
                return False
        if then == "error":
            self._cancel_source()
            self.finish(
                MissingBackpressureError(
                    f"overflow: {item!r} arrived without demand and the buffer of "
                    f"{policy.max_size} items is full"
                )
            )
            return False
        return then == "drop_oldest"

    def _cancel_source(self) -> None:
        """Stop the producer: the stream is failing."""


@attrs.define(eq=False)
class OverflowSubscriber(OverflowDrain[T], Subscriber[T], Generic[T]):
    """An `OverflowDrain` fed by an upstream that is asked for everything at once.

    What the ``on_backpressure_*`` operators are made of: the subscriber's demand is served
    from the buffer and whatever does not fit goes to the policy.
    """

    _upstream: Subscription | None = attrs.field(default=None, init=False)

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "2.13", "on_subscribe's subscription")
        if self._upstream is not None or self._done:
            subscription.cancel()  # rule 2.5, or cancelled before upstream arrived
            return
        self._upstream = subscription
        subscription.request(MAX_DEMAND)

    def on_next(self, item: T) -> None:
        if current_loop() is not self._loop and hand_over(self._loop, self.on_next, item):
            return
        self.offer(item)

    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        if hand_over(self._loop, self.on_error, error):
            return
        self._upstream = None
        self.fail(error)

    def on_complete(self) -> None:
        if hand_over(self._loop, self.on_complete):
            return
        self._upstream = None
        self.finish()

    def _cancel_source(self) -> None:
        upstream, self._upstream = self._upstream, None
        if upstream is not None:
            upstream.cancel()

    def _release(self) -> None:
        super()._release()
        self._cancel_source()
