"""`BufferDrain`: a `DrainSubscription` that emits from a FIFO its producer fills.

The producer side (an upstream subscriber, a push sink, a processor) calls `BufferDrain.push`
and `BufferDrain.finish`; the drain hands buffered items to the one subscriber as demand allows
and delivers the terminal signal once the buffer is empty, so a failure never overtakes the
items produced before it. Producer calls must come from the owning thread: callers hand
foreign-thread calls over first.

With ``asynchronous=True`` a push does not emit on the producer's stack: it schedules one
drain on the loop per batch (a wake-up is only scheduled when none is pending), which is what
an async boundary needs. Otherwise the drain runs in place, trampolined as usual.

`PrefetchDrain` adds the upstream side for prefetching operators (``publish_on``,
``limit_rate``): it requests a window, buffers what arrives and re-requests in batches as
the buffer empties.
"""

from __future__ import annotations

from collections import deque
from typing import Generic, TypeVar

import attrs

from ._checks import require_not_none
from ._demand import Replenisher
from ._drain import DrainSubscription
from ._exceptions import MissingBackpressureError
from ._loop import current_loop, hand_over
from ._report import report_late_error
from ._spec import Subscriber, Subscription

__all__ = ("BufferDrain", "PrefetchDrain", "end_stream")

T = TypeVar("T")


def end_stream(subscription: DrainSubscription[T], failure: BaseException | None) -> None:
    """Terminate *subscription* with ``on_error(failure)``, or ``on_complete`` without one."""
    if failure is None:
        subscription._complete()
    else:
        subscription._error(failure)


@attrs.define(eq=False)
class BufferDrain(DrainSubscription[T], Generic[T]):
    """Base of buffered subscriptions; subclasses override `_consumed` and `_release`."""

    _asynchronous: bool = attrs.field(default=False, kw_only=True, alias="asynchronous")
    _queue: deque[T] = attrs.field(factory=deque, init=False)
    _finished: bool = attrs.field(default=False, init=False)
    _failure: BaseException | None = attrs.field(default=None, init=False)
    delivered: int = attrs.field(default=0, init=False)
    """Items handed to the subscriber so far."""

    # -- producer side ------------------------------------------------------------------

    @property
    def buffered(self) -> int:
        """Items waiting in the buffer."""
        return len(self._queue)

    @property
    def finished(self) -> bool:
        """True once `finish` was called (or the subscription ended)."""
        return self._finished or self._done

    def push(self, item: T) -> None:
        """Append *item* and let the drain deliver it; ignored once finished or cancelled."""
        if self._finished or self._done:
            return
        self._queue.append(item)
        self.signal()

    def finish(self, error: BaseException | None = None) -> None:
        """End the stream after the buffered items: ``on_error(error)`` or ``on_complete``."""
        if self._finished or self._done:
            return
        self._finished = True
        self._failure = error
        self.signal()

    def fail(self, error: BaseException) -> None:
        """`finish` with *error*; an error that arrives once the stream has ended (or is ending)
        has nobody to go to and is reported instead (rule 1.7)."""
        if self._finished or self._done:
            report_late_error(error, self._loop)
        else:
            self.finish(error)

    def signal(self) -> None:
        """Drain now, or schedule one drain on the loop when asynchronous."""
        if not self._asynchronous or self._loop is None:
            super().signal()
        elif not self._resume_scheduled and not self._done:
            self._resume_scheduled = True
            self._loop.call_soon(self._resume)

    # -- what subclasses override -------------------------------------------------------

    def _consumed(self, count: int) -> None:
        """Called after *count* items left the buffer (to replenish upstream, wake producers)."""

    # -- DrainSubscription --------------------------------------------------------------

    def _emit(self, limit: int) -> int:
        count = self._emit_from(self._queue, limit)
        if count:
            self.delivered += count
            self._consumed(count)
        if self._finished and not self._queue and not self._done and self._downstream is not None:
            failure, self._failure = self._failure, None
            end_stream(self, failure)
        return count

    def _release(self) -> None:
        self._queue.clear()


@attrs.define(eq=False)
class PrefetchDrain(BufferDrain[T], Subscriber[T], Generic[T]):
    """A `BufferDrain` fed by an upstream it prefetches from.

    A `Replenisher` asks upstream for *prefetch* items at once and then for *replenish* items
    each time that many have been delivered, so the buffer never holds more than *prefetch*
    items. ``prefetch == MAX_DEMAND`` asks once for everything. Upstream signals from a foreign
    thread are handed over to the owning loop in order.
    """

    _prefetch: int = attrs.field(kw_only=True, alias="prefetch")
    _replenish: int = attrs.field(kw_only=True, alias="replenish")
    _replenisher: Replenisher = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self._replenisher = Replenisher(self._prefetch, self._replenish)

    # -- upstream signals ---------------------------------------------------------------

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "2.13", "on_subscribe's subscription")
        if self._replenisher.upstream is not None or self._done:
            subscription.cancel()  # a second subscription (rule 2.5) or already cancelled
            return
        self._replenisher.start(subscription)

    def on_next(self, item: T) -> None:
        if current_loop() is not self._loop and hand_over(self._loop, self.on_next, item):
            return
        if self._finished or self._done:
            return
        queue = self._queue
        if len(queue) >= self._prefetch:
            self._replenisher.cancel()
            self.finish(
                MissingBackpressureError(
                    f"rule 1.1: upstream sent more than the {self._prefetch} items requested"
                )
            )
            return
        queue.append(item)
        if self._draining:
            # upstream emits inside our replenishing request: the running drain passes again
            self._missed = True
        elif not self._asynchronous:
            self._drain()
        elif not self._resume_scheduled:
            self.signal()  # one wake-up per batch

    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        if hand_over(self._loop, self.on_error, error):
            return
        self._replenisher.upstream = None
        self.fail(error)

    def on_complete(self) -> None:
        if hand_over(self._loop, self.on_complete):
            return
        self._replenisher.upstream = None
        self.finish()

    # -- BufferDrain --------------------------------------------------------------------

    def _consumed(self, count: int) -> None:
        if not self._finished and not self._done:
            self._replenisher.consumed(count)

    def _release(self) -> None:
        super()._release()
        self._replenisher.cancel()
