"""`MulticastProcessor`: one upstream, many subscribers moving in lockstep.

Backpressure: prefetches ``buffer_size`` items from upstream into a bounded queue and
re-requests in halves as the queue drains. An item is emitted only when every current
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

Subscribers live in a copy-on-write tuple; ``None`` marks termination. ``on_subscribe`` is
delivered before a subscriber joins the tuple, so a terminal signal can never overtake it.
When the last subscriber cancels on a live processor, upstream is cancelled (reference
counting); `MulticastProcessor.disconnect` does the same on purpose and fails the subscribers.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Generic, TypeVar, final

import attrs

from .._core import (
    DRAIN_BATCH,
    MAX_DEMAND,
    DrainSubscription,
    LoopBound,
    MissingBackpressureError,
    Processor,
    Replenisher,
    Subscriber,
    Subscription,
    current_loop,
    hand_over,
    produced,
    report_late_error,
    require_not_none,
)

__all__ = ("MulticastProcessor",)

T = TypeVar("T")


@final
@attrs.define(eq=False)
class MulticastProcessor(Processor[T, T], LoopBound, Generic[T]):
    """A hot processor: every subscriber sees the items that arrive while it is subscribed.

    Args:
        buffer_size: the prefetch window (and queue bound).
        auto_cancel: cancel upstream when the last subscriber leaves (reference counting).
    """

    buffer_size: int = 256
    auto_cancel: bool = attrs.field(default=True, kw_only=True)
    _queue: deque[T] = attrs.field(factory=deque, init=False)
    _subscribers: tuple[_MulticastSubscription[T], ...] | None = attrs.field(default=(), init=False)
    """Current subscribers; ``None`` once terminated (the terminal marker)."""
    _replenisher: Replenisher = attrs.field(init=False)
    _upstream_cancelled: bool = attrs.field(default=False, init=False)
    _finished: bool = attrs.field(default=False, init=False)
    _failure: BaseException | None = attrs.field(default=None, init=False)
    _emitted: int = attrs.field(default=0, init=False)
    """Items emitted since the start: a subscriber's outstanding demand is its cumulative
    demand less what went out since it joined (see `_MulticastSubscription`)."""
    _ready: int = attrs.field(default=0, init=False)
    """The smallest outstanding demand among the subscribers: items that may go out now."""
    _stale: bool = attrs.field(default=False, init=False)
    """A subscriber came, went or requested: `_ready` is recomputed before the next item."""
    _draining: bool = attrs.field(default=False, init=False)
    _missed: bool = attrs.field(default=False, init=False)
    _resume_scheduled: bool = attrs.field(default=False, init=False)
    _loop: asyncio.AbstractEventLoop | None = attrs.field(factory=current_loop, init=False)

    def __attrs_post_init__(self) -> None:
        if self.buffer_size <= 0:
            raise ValueError(f"buffer_size must be > 0, got {self.buffer_size}")
        self._replenisher = Replenisher(
            self.buffer_size, self.buffer_size - (self.buffer_size >> 1)
        )

    # -- state --------------------------------------------------------------------------

    @property
    def subscriber_count(self) -> int:
        """Subscribers currently attached."""
        subscribers = self._subscribers
        return len(subscribers) if subscribers is not None else 0

    @property
    def terminated(self) -> bool:
        """True once every subscriber has been sent the terminal signal."""
        return self._subscribers is None

    @property
    def buffered(self) -> int:
        """Items waiting until every subscriber has demand."""
        return len(self._queue)

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
        queue = self._queue
        if not queue and not self._draining:
            # Nothing waits ahead of the item: straight to every subscriber when all have demand.
            if self._stale:
                self._refresh()
            if self._ready > 0:
                subscribers = self._subscribers
                assert subscribers is not None
                self._draining = True
                try:
                    self._emit_item(subscribers, item)
                finally:
                    self._draining = False
                self._replenisher.consumed(1)
                if self._missed:
                    self._drain()
                return
        if len(queue) >= self.buffer_size:
            self._cancel_upstream()
            self._finish(
                MissingBackpressureError(
                    f"rule 1.1: upstream sent more than the {self.buffer_size} items requested"
                )
            )
            return
        queue.append(item)
        self._drain()

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
        # start() signals on_subscribe; the subscription joins in its first _emit, after it.
        _MulticastSubscription[T](subscriber, processor=self).start()

    def disconnect(self, error: BaseException) -> None:
        """Cancel upstream and fail every subscriber with *error* (a connection was disposed)."""
        if hand_over(self._loop, self.disconnect, error):
            return
        self._cancel_upstream()
        self._queue.clear()
        self._finish(error)

    # -- internals ----------------------------------------------------------------------

    def _bind(self) -> None:
        if self._loop is None:
            loop = current_loop()
            if loop is not None:
                self._loop = loop

    def _finish(self, error: BaseException | None) -> None:
        if self._finished:
            return
        self._finished = True
        self._failure = error
        self._drain()

    def _cancel_upstream(self) -> None:
        self._upstream_cancelled = True
        self._replenisher.cancel()

    def _join(self, subscription: _MulticastSubscription[T]) -> None:
        subscribers = self._subscribers
        if subscribers is None:  # terminated: the late subscriber gets the terminal signal
            failure = self._failure
            if failure is None:
                subscription._complete()
            else:
                subscription._error(failure)
            return
        subscription._joined_at = self._emitted
        self._subscribers = (*subscribers, subscription)
        self._demand_changed()

    def _leave(self, subscription: _MulticastSubscription[T]) -> None:
        subscribers = self._subscribers
        if subscribers is None or subscription not in subscribers:
            return
        remaining = tuple(s for s in subscribers if s is not subscription)
        self._subscribers = remaining
        if not remaining and self.auto_cancel and not self._finished:
            self._cancel_upstream()  # reference counting: nobody is listening any more
        else:
            self._demand_changed()  # the slowest subscriber may have left

    def _demand_changed(self) -> None:
        self._stale = True
        self._drain()

    def _refresh(self) -> None:
        """Recompute `_ready` from the subscribers' demand (per request, never per item)."""
        self._stale = False
        subscribers = self._subscribers
        if not subscribers:
            self._ready = 0
            return
        emitted = self._emitted
        self._ready = min(produced(s._requested, emitted - s._joined_at) for s in subscribers)

    def _emit_item(self, subscribers: tuple[_MulticastSubscription[T], ...], item: T) -> None:
        """Hand *item* to every subscriber: the one emission, in lockstep."""
        self._emitted += 1
        ready = self._ready
        if ready != MAX_DEMAND:
            self._ready = ready - 1
        for subscription in subscribers:
            downstream = subscription._downstream
            if downstream is None:
                continue  # cancelled while this item was going out
            try:
                downstream.on_next(item)
            except Exception as exc:
                subscription._subscriber_failed(exc, "on_next")

    def _drain(self) -> None:
        if self._draining:
            self._missed = True
            return
        self._draining = True
        try:
            self._drain_loop()
        finally:
            self._draining = False

    def _drain_loop(self) -> None:
        queue = self._queue
        budget = DRAIN_BATCH
        while True:
            self._missed = False
            subscribers = self._subscribers
            if subscribers is None:
                return
            if self._stale:
                self._refresh()
            count = min(self._ready, len(queue), budget)
            if count > 0:
                sent = 0
                while sent < count:
                    self._emit_item(subscribers, queue.popleft())
                    sent += 1
                    if self._stale:  # someone came, went or requested: recount first
                        break
                if not self._finished:
                    self._replenisher.consumed(sent)
                budget -= sent
                if budget <= 0 and self._loop is not None:
                    if not self._resume_scheduled:
                        self._resume_scheduled = True
                        self._loop.call_soon(self._resume)
                    return
                continue
            if self._finished and not queue:
                self._subscribers = None
                failure = self._failure
                for subscription in subscribers:
                    if failure is None:
                        subscription._complete()
                    else:
                        subscription._error(failure)
                return
            if not self._missed:
                return

    def _resume(self) -> None:
        self._resume_scheduled = False
        self._drain()


@final
@attrs.define(eq=False)
class _MulticastSubscription(DrainSubscription[T]):
    """One subscriber's demand; the processor emits to it in lockstep with the others.

    Nothing is emitted through this subscription's own drain, so its ``_requested`` only ever
    grows: it is the subscriber's cumulative demand, and what is still outstanding is that
    less the items the processor emitted since ``_joined_at``.
    """

    _processor: MulticastProcessor[T] = attrs.field(kw_only=True, alias="processor")
    _joined: bool = attrs.field(default=False, init=False)
    _joined_at: int = attrs.field(default=0, init=False)

    def _emit(self, limit: int) -> int:
        if not self._joined:
            self._joined = True
            self._processor._join(self)
        else:
            self._processor._demand_changed()
        return 0

    def _release(self) -> None:
        if self._joined:
            self._processor._leave(self)
