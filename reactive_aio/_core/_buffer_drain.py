"""`BufferDrain`: the one buffered emission, a `DrainSubscription` that emits from a FIFO.

Whatever fills the FIFO, the drain hands its items to the one subscriber as demand allows and
delivers the terminal signal once it is empty, so a failure never overtakes the items produced
before it. What fills it, and how, is configured rather than subclassed into new bases:

* a *producer* (a timer, a callback, a worker task) calls `BufferDrain.push` and
  `BufferDrain.finish` (or `BufferDrain.fail`); with a *capacity*, a push beyond it is an
  overflow: the held items are dropped and the stream fails at once with
  `MissingBackpressureError` (``on_error`` needs no demand), for producers not bounded by
  demand;
* an *upstream*: the drain is also that upstream's subscriber. ``on_subscribe`` is set-once
  (rule 2.5) and calls `BufferDrain._subscribed`, which, given a *prefetch* window, asks for
  it and then re-requests *replenish* items (three quarters by default) each time that many
  were delivered; ``on_next`` buffers within the window (more is `MissingBackpressureError`);
  the upstream's terminal signal goes through `BufferDrain._ending` (by default: end after the
  buffered items). An upstream that has not terminated is cancelled when the drain is
  released. Upstream signals from a foreign thread are handed over to the owning loop first;
* ``asynchronous=True`` never emits on the producer's (or upstream's) stack: a new item
  schedules one drain on the loop per batch (`DrainSubscription.signal_soon`), which is what an
  async boundary needs. Otherwise the drain runs in place, trampolined as usual.

Subclasses override the hooks: ``on_next`` (what an upstream item becomes), `_subscribed`,
`_requested_more` (downstream asked for more: forward demand), `_ending`, `_consumed` (items
left the buffer: wake a producer) and `_release` (calling ``super()``); *on_release* is the
hook for a producer that is not a subclass. Producer calls come from the owning thread.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import attrs

from ._checks import require_not_none
from ._demand import MAX_DEMAND, Replenisher
from ._drain import DrainSubscription
from ._exceptions import MissingBackpressureError
from ._loop import current_loop, hand_over
from ._report import report_late_error
from ._scan import StageScan
from ._spec import Subscriber, Subscription

__all__ = ("BufferDrain", "end_stream")

T = TypeVar("T")


def end_stream(subscription: DrainSubscription[T], failure: BaseException | None) -> None:
    """Terminate *subscription* with ``on_error(failure)``, or ``on_complete`` without one."""
    if failure is None:
        subscription._complete()
    else:
        subscription._error(failure)


def _nothing() -> None:
    pass


@attrs.define(eq=False)
class BufferDrain(DrainSubscription[T], Generic[T]):
    """A drain over a FIFO that a producer or an upstream fills (see the module docstring).

    Args:
        asynchronous: emit from loop callbacks only, never on the producer's stack.
        capacity: the most items `push` may hold; one more fails the stream.
        what: the name an overflow error gives (the operator's).
        prefetch: as an upstream's subscriber, the window asked for (``MAX_DEMAND``: all).
        replenish: re-request after this many were delivered (three quarters of *prefetch*).
        on_release: called once when cancelled or terminated.
    """

    _asynchronous: bool = attrs.field(default=False, kw_only=True, alias="asynchronous")
    _capacity: int = attrs.field(default=MAX_DEMAND, kw_only=True, alias="capacity")
    _what: str = attrs.field(default="operator", kw_only=True, alias="what")
    _prefetch: int | None = attrs.field(default=None, kw_only=True, alias="prefetch")
    _replenish: int | None = attrs.field(default=None, kw_only=True, alias="replenish")
    _on_release: Callable[[], object] = attrs.field(
        default=_nothing, kw_only=True, alias="on_release"
    )
    _queue: deque[T] = attrs.field(factory=deque, init=False)
    _finished: bool = attrs.field(default=False, init=False)
    _failure: BaseException | None = attrs.field(default=None, init=False)
    _upstream: Subscription | None = attrs.field(default=None, init=False)
    _upstream_done: bool = attrs.field(default=False, init=False)
    """The upstream terminated, or was cancelled."""
    _prefetcher: Replenisher | None = attrs.field(default=None, init=False)
    """With *prefetch*: the upstream's demand, replenished as items are delivered."""
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
        """Append *item* and let the drain deliver it; ignored once finished or cancelled;
        beyond *capacity* the held items are dropped and the stream fails at once."""
        if self._finished or self._done:
            return
        queue = self._queue
        if len(queue) >= self._capacity:
            queue.clear()
            self.finish(
                MissingBackpressureError(
                    f"{self._what}: the subscriber has no demand and {self._capacity} items "
                    "are already held"
                )
            )
            return
        queue.append(item)
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

    def serve(self, subscriber: Subscriber[T]) -> None:
        """Start serving *subscriber*: for a buffer made before its subscriber (a processor's),
        which holds what arrived (and a terminal signal) until then."""
        self._downstream = subscriber
        self.start()

    def signal(self) -> None:
        """Drain now, or from a loop callback when asynchronous."""
        if self._asynchronous:
            self.signal_soon()
        else:
            self._drain()

    # -- the subscriber's side ----------------------------------------------------------

    def request(self, n: int) -> None:
        if current_loop() is not self._loop and hand_over(self._loop, self.request, n):
            return
        super().request(n)
        if not self._done:  # a bad n failed the stream above, so here n is an int > 0
            self._requested_more(n)

    # -- upstream side ------------------------------------------------------------------

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "2.13", "on_subscribe's subscription")
        if self._upstream is not None or self._upstream_done or self._done:
            subscription.cancel()  # a second subscription (rule 2.5) or already over
            return
        self._upstream = subscription
        self._subscribed(subscription)

    def on_next(self, item: Any) -> None:
        """Buffer an upstream item within the *prefetch* window and emit what demand allows.

        Typed ``Any`` so that a subclass whose upstream items are not what it emits (a batch
        of them, a result) overrides it with their type.
        """
        if current_loop() is not self._loop and hand_over(self._loop, self.on_next, item):
            return
        if self._finished or self._done:
            return
        queue = self._queue
        window = self._prefetch
        if window is not None and len(queue) >= window:
            self._overflowed(window)
            return
        queue.append(item)
        self.signal()

    def on_items(self, items: list[Any]) -> None:
        """Buffer several upstream items at once, as as many `on_next` calls would, with one
        signal: what an `ItemsSubscriber` subclass takes (``publish_on``'s buffer, served by
        a source at hand a request at a time). Not for a subclass that overrides `on_next`."""
        if current_loop() is not self._loop and hand_over(self._loop, self.on_items, items):
            return
        if self._finished or self._done:
            return
        queue = self._queue
        window = self._prefetch
        if window is not None and len(queue) + len(items) > window:
            self._overflowed(window)
            return
        queue.extend(items)
        self.signal()

    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        if hand_over(self._loop, self.on_error, error):
            return
        if self._upstream_done:
            report_late_error(error, self._loop)
            return
        self._upstream_done = True
        self._ending(error)

    def on_complete(self) -> None:
        if hand_over(self._loop, self.on_complete):
            return
        if not self._upstream_done:
            self._upstream_done = True
            self._ending(None)

    # -- hooks --------------------------------------------------------------------------

    def _subscribed(self, upstream: Subscription) -> None:
        """The upstream subscribed this drain: ask for the *prefetch* window, if one is set."""
        prefetch = self._prefetch
        if prefetch is not None:
            replenish = self._replenish
            window = (
                Replenisher(prefetch) if replenish is None else Replenisher(prefetch, replenish)
            )
            self._prefetcher = window
            window.start(upstream)

    def _requested_more(self, n: int) -> None:
        """Downstream asked for *n* more (valid) items."""

    def _ending(self, error: BaseException | None) -> None:
        """The upstream terminated: end after the buffered items (flush first, if held)."""
        if error is None:
            self.finish()
        else:
            self.fail(error)

    def _consumed(self, count: int) -> None:
        """*count* items left the buffer: replenish the upstream's window."""
        window = self._prefetcher
        if window is not None and not self._finished and not self._done:
            window.consumed(count)

    # -- DrainSubscription --------------------------------------------------------------

    def scan_stage(self) -> StageScan:
        """The buffer, its bound (the prefetch window, else the capacity) and the items
        delivered; the operator is *what* when one was given (an operator that uses this class
        as it is, such as ``publish_on``)."""
        scan = super().scan_stage()
        bound = self._prefetch if self._prefetch is not None else self._capacity
        return attrs.evolve(
            scan,
            operator=scan.operator if self._what == "operator" else self._what,
            state=scan.state if self._failure is None else "failed",
            error=self._failure,
            buffered=len(self._queue),
            capacity=None if bound >= MAX_DEMAND else bound,
            emitted=self.delivered,
            upstream=self._upstream,
        )

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
        self._drop_upstream()
        # The hook may be bound to an operator that references downstream: let go of it, so a
        # caller still holding this subscription does not keep the subscriber (rule 3.13).
        release, self._on_release = self._on_release, _nothing
        release()

    def _overflowed(self, window: int) -> None:
        """The upstream sent more than the *window* asked of it (rule 1.1): cancel it and fail
        after the items held."""
        self._drop_upstream()
        self.finish(
            MissingBackpressureError(
                f"rule 1.1: upstream sent more than the {window} items requested"
            )
        )

    def _drop_upstream(self) -> None:
        """Cancel an upstream that has not terminated, and let go of it."""
        upstream, self._upstream = self._upstream, None
        if upstream is not None and not self._upstream_done:
            self._upstream_done = True
            upstream.cancel()
