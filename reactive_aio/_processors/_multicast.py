"""`MulticastProcessor`: one upstream, many subscribers moving in lockstep.

Backpressure: prefetches ``buffer_size`` items from upstream into a bounded queue and
re-requests three quarters of it at a time as the queue drains. An item is emitted only when every current
subscriber has demand for it, so the slowest subscriber sets the pace and nobody skips items;
with no subscriber at all the queue fills up and upstream waits.
Errors: upstream errors and completion reach every subscriber after the queued items; a
subscriber that arrives after termination gets ``on_subscribe`` and then the terminal signal.
An upstream that overflows the window fails with `MissingBackpressureError`. A subscriber
whose signal raises is cancelled and the error reported (rule 2.13); so is an upstream error
that arrives after termination (a second ``on_error``, or one after ``on_complete``).
Rules: any number of subscribers may come and go (rule 1.11), each a fresh one (rule 1.10);
when the last one cancels, the upstream subscription is cancelled too (rule 3.14).
Loop: upstream signals from other threads are handed over to the loop the processor was
first used on, in order; the drain yields to the loop after every `DRAIN_BATCH` items.
Context: every signal after ``on_subscribe`` reaches a subscriber inside the `contextvars`
context in which it subscribed (so do the callbacks of the operators after it), whichever
task or callback the upstream emits from; items go out in batches, subscriber by subscriber.

The emission is the kit's `LockstepDrain`; the processor is its upstream side (prefetch,
overflow, thread hand-over). When the last subscriber cancels on a live processor, upstream
is cancelled (reference counting); `MulticastProcessor.disconnect` does the same on purpose
and fails the subscribers.
"""

from __future__ import annotations

import asyncio
from typing import Generic, TypeVar, final

import attrs

from .._core import (
    LockstepDrain,
    LoopBound,
    MissingBackpressureError,
    Processor,
    Replenisher,
    StageScan,
    Subscriber,
    Subscription,
    current_loop,
    hand_over,
    operator_name,
    report_late_error,
    require_not_none,
)

__all__ = ("MulticastProcessor",)

T = TypeVar("T")


@final
@attrs.define(eq=False)
class MulticastProcessor(Processor[T, T], LoopBound, Generic[T]):
    """A hot processor: every subscriber sees the items that arrive while it is subscribed.

    Each subscriber receives its signals inside the `contextvars` context it subscribed in.

    Args:
        buffer_size: the prefetch window (and queue bound).
        auto_cancel: cancel upstream when the last subscriber leaves (reference counting).
    """

    buffer_size: int = 256
    auto_cancel: bool = attrs.field(default=True, kw_only=True)
    _drain: LockstepDrain[T] = attrs.field(init=False)
    _replenisher: Replenisher = attrs.field(init=False)
    _upstream_cancelled: bool = attrs.field(default=False, init=False)
    _finished: bool = attrs.field(default=False, init=False)
    _loop: asyncio.AbstractEventLoop | None = attrs.field(factory=current_loop, init=False)

    def __attrs_post_init__(self) -> None:
        if self.buffer_size <= 0:
            raise ValueError(f"buffer_size must be > 0, got {self.buffer_size}")
        self._replenisher = Replenisher(self.buffer_size)
        # (an ended upstream is let go of, so the replenisher asks nobody once it is over)
        self._drain = LockstepDrain[T](
            capacity=self.buffer_size,
            on_consumed=self._replenisher.consumed,
            on_abandoned=self._abandoned,
            owner=self,
        )

    # -- state --------------------------------------------------------------------------

    @property
    def subscriber_count(self) -> int:
        """Subscribers currently attached."""
        return self._drain.subscriber_count

    @property
    def terminated(self) -> bool:
        """True once every subscriber has been sent the terminal signal."""
        return self._drain.terminated

    @property
    def buffered(self) -> int:
        """Items waiting until every subscriber has demand."""
        return self._drain.buffered

    def scan_stage(self) -> StageScan:
        """The hub's queue, bound and count, and the upstream it prefetches from."""
        return attrs.evolve(
            self._drain.scan_stage(),
            operator=operator_name(type(self)),
            upstream=self._replenisher.upstream,
        )

    # -- Subscriber (upstream side) -----------------------------------------------------

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "2.13", "on_subscribe's subscription")
        self._bind()
        replenisher = self._replenisher
        if replenisher.upstream is not None or self._finished or self._upstream_cancelled:
            subscription.cancel()  # rule 2.5, or the processor is over
            return
        replenisher.start(subscription)

    def on_next(self, item: T) -> None:
        if item is None:  # an `is` per item; the check itself only for the failing one
            require_not_none(item, "2.13", "on_next's item")
        if current_loop() is not self._loop and hand_over(self._loop, self.on_next, item):
            return
        if self._finished:
            return
        if not self._drain.push(item):
            self._cancel_upstream()
            self._finish(
                MissingBackpressureError(
                    f"rule 1.1: upstream sent more than the {self.buffer_size} items requested"
                )
            )

    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        if hand_over(self._loop, self.on_error, error):
            return
        if self._finished:
            report_late_error(error, self._loop)
            return
        self._replenisher.upstream = None
        self._finish(error)

    def on_complete(self) -> None:
        if hand_over(self._loop, self.on_complete):
            return
        self._replenisher.upstream = None
        self._finish(None)

    # -- Publisher (downstream side) ----------------------------------------------------

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self._bind()
        self._drain.subscribe(subscriber)

    def disconnect(self, error: BaseException) -> None:
        """Cancel upstream and fail every subscriber with *error* (a connection was disposed)."""
        if hand_over(self._loop, self.disconnect, error):
            return
        self._cancel_upstream()
        self._drain.clear()
        self._finish(error)

    # -- internals ----------------------------------------------------------------------

    def _bind(self) -> None:
        if self._loop is None:
            loop = current_loop()
            if loop is not None:
                self._loop = loop
                self._drain.bind()

    def _finish(self, error: BaseException | None) -> None:
        if self._finished:
            return
        self._finished = True
        self._drain.finish(error)

    def _cancel_upstream(self) -> None:
        self._upstream_cancelled = True
        self._replenisher.cancel()

    def _abandoned(self) -> None:
        if self.auto_cancel and not self._finished:
            self._cancel_upstream()  # reference counting: nobody is listening any more
