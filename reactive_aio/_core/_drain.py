"""The one drain: demand bookkeeping and the trampoline every emitting subscription reuses.

A `DrainSubscription` serves exactly one subscriber. Subclasses say *what* to emit by
implementing `DrainSubscription._emit`; this class decides *when*:

* ``request(n)`` adds saturated demand and runs the drain; a ``request`` made from inside
  ``on_next`` finds the drain already running, only adds demand and returns, and the running
  drain picks it up. Signals therefore never nest deeper than one (rule 3.3).
* `DrainSubscription.signal` is how a producer says "something changed" (an item queued, a
  source ended): it drains now, or, when the drain is already running further up the stack,
  makes it run another pass (the *missed* flag), so no event is lost.
* `DrainSubscription._emit_from` is the one queue-backed emit loop: every subscription that
  emits from a deque hands items out with it; `DrainSubscription._emit_now` is its fast path
  for one item that arrives when nothing is pending.
* One pass emits as much as demand allows, but after `DRAIN_BATCH` items it yields to the
  event loop (when there is one) and resumes from a fresh callback, so one fast stream with
  unbounded demand cannot starve the loop. Items a fused filter drops count as well, each
  `DROPS_PER_ITEM` of them as one (an emit loop takes them off `DrainSubscription._budget`): a
  source that drops long runs, or everything, still yields.
* ``request``/``cancel`` from a foreign thread are handed over to the owning loop first.
* ``request(n)`` with an *n* that is not an int > 0 (``0``, ``-1``, ``1.5``, ``"3"``, ``True``)
  becomes ``on_error`` from the drain (rule 3.9), never on the caller's stack inside ``on_next``.
* A subscriber whose signal raises is treated as cancelled and the error is reported
  (rule 2.13); after cancel or termination the subscriber is dropped (rule 3.13).
* A subscription given a ``context`` (a sharing point's, captured where its subscriber
  subscribed) runs every pass inside it: one ``Context.run`` per pass, whoever set it off.

Rules kept here for every source: never more ``on_next`` than requested (rule 1.1), fewer
is fine before a terminal signal (rule 1.2); ``on_subscribe`` first, from ``start`` (rule 1.9),
to a subscriber not already subscribed (rules 1.10, 2.12, see `attach`);
one terminal signal, after which the subscription counts as cancelled and nothing follows
(rules 1.5, 1.6, 1.7); cancel stops signals and is idempotent, later requests are no-ops
(rules 1.8, 3.5, 3.6, 3.7, 3.12); demand is additive and saturates (rules 3.8, 3.17); requests
return quickly and normally, and may emit synchronously from the drain (rules 3.2, 3.4, 3.10,
3.11, 3.15, 3.16).
"""

from __future__ import annotations

import asyncio
import contextvars
from collections import deque
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import attrs

from ._attach import attach
from ._checks import request_error
from ._demand import MAX_DEMAND
from ._exceptions import stream_error
from ._loop import current_loop, hand_over
from ._report import raising_subscriber, report_error, report_late_error
from ._scan import StageScan, operator_name
from ._spec import Subscriber, Subscription

__all__ = ("DRAIN_BATCH", "DROPS_PER_ITEM", "DrainSubscription")

T = TypeVar("T")

_EMPTY: Any = object()
"""Never a queued item: what stops popping a queue (the loop counts its items anyway)."""

DRAIN_BATCH = 1024
"""Items emitted in one pass before the drain yields to the event loop."""

DROPS_PER_ITEM = 4
"""Items a fused filter drops that spend one item of a pass's budget. A drop costs the loop
only the stages before it, a fraction of an emitted item: a pass that drops everything yields
after ``DROPS_PER_ITEM * DRAIN_BATCH`` items, and a filter that keeps one item in four or more
yields as often as one that drops nothing."""


@attrs.define(eq=False)
class DrainSubscription(Subscription, Generic[T]):
    """Base of every subscription that pushes items to one subscriber.

    Subclasses implement `_emit` and, when they hold resources, `_release`.
    """

    _downstream: Subscriber[T] | None
    _requested: int = attrs.field(default=0, init=False)
    _ever_requested: int = attrs.field(default=0, init=False)
    """Every valid request added up (once per request, never per item): less what is still
    requested, it is what was emitted."""
    _draining: bool = attrs.field(default=False, init=False)
    _resume_scheduled: bool = attrs.field(default=False, init=False)
    _missed: bool = attrs.field(default=False, init=False)
    """A `signal` arrived while the drain was running: it passes once more."""
    _done: bool = attrs.field(default=False, init=False)
    """Stop emitting: cancelled, terminated, or an error is pending delivery."""
    _fault: BaseException | None = attrs.field(default=None, init=False)
    _loop: asyncio.AbstractEventLoop | None = attrs.field(factory=current_loop, init=False)
    _budget: int = attrs.field(default=DRAIN_BATCH, init=False)
    """Items `_emit` may still take in the running pass before the drain yields to the loop:
    an emit that drops items (a fused filter) takes them off, the drain the items emitted."""
    _context: contextvars.Context | None = attrs.field(default=None, kw_only=True, alias="context")
    """The context of a sharing point's subscriber (captured where it subscribed): every pass
    runs inside it, whoever set the pass off (another subscriber, the upstream)."""

    # -- what subclasses implement ------------------------------------------------------

    def _emit(self, limit: int) -> int:
        """Emit at most *limit* items with ``self._downstream.on_next`` and return how many.

        Called with ``limit == 0`` too, so a source can terminate without demand. It may call
        `_complete` or `_error` to terminate. It must stop as soon as ``self._done`` turns
        true (``on_next`` may cancel). Errors of the source itself must be caught and passed to
        `_error`; anything that escapes is taken to come from the subscriber (rule 2.13). An
        emit that drops items takes them off ``self._budget`` and stops when it runs out.
        """
        raise NotImplementedError

    def _release(self) -> None:
        """Free resources once the subscription is cancelled or terminated."""

    # -- the subscriber's side ----------------------------------------------------------

    def start(self) -> None:
        """Signal ``on_subscribe`` and run a first drain (a source may end without demand)."""
        downstream = self._downstream
        assert downstream is not None
        if not attach(downstream, self):  # subscribed twice (rules 1.10, 2.12): refused
            self._terminate()
            return
        # Demand requested inside on_subscribe is served after it returns: no signal may
        # start while another one to the same subscriber is still on the stack (rule 1.3).
        self._draining = True
        try:
            downstream.on_subscribe(self)
        except Exception as exc:
            self._subscriber_failed(exc, "on_subscribe")
            return
        finally:
            self._draining = False
        self._drain()

    def request(self, n: int) -> None:
        """Add *n* to the demand and drain; anything but an int > 0 is signalled as an error
        (rule 3.9)."""
        if current_loop() is not self._loop and hand_over(self._loop, self.request, n):
            return
        if self._done:
            return
        if type(n) is not int or n <= 0:
            self._fault = request_error(n)
            self._done = True  # stops an emit loop further up the stack at once
        else:
            # add_demand inlined: every request of every chain passes here (benchmarked)
            total = self._requested + n
            self._requested = MAX_DEMAND if total >= MAX_DEMAND else total
            self._ever_requested += n
        self._drain()

    def cancel(self) -> None:
        """Stop signalling and drop the subscriber; idempotent and thread-safe (rules 3.5-3.7)."""
        if hand_over(self._loop, self.cancel):
            return
        self._terminate()

    def scan_stage(self) -> StageScan:
        """The demand outstanding and what was emitted against it (unknown once demand is
        unbounded, or once ended: the count is dropped with the subscriber). A subclass with an
        upstream, a buffer or inner chains adds them."""
        requested = self._requested
        return StageScan(
            operator=operator_name(type(self)),
            state="ended" if self._done else "active",
            demand=None if self._done else requested,
            emitted=None
            if self._done or requested >= MAX_DEMAND
            else self._ever_requested - requested,
            loop=self._loop,
        )

    # -- what subclasses call -----------------------------------------------------------

    @property
    def done(self) -> bool:
        """True once cancelled or terminated."""
        return self._done

    def bind(self) -> None:
        """Take the running loop as the owner (yields and hand-overs go to it), for a
        subscription made outside a loop, before its subscriber (a processor's)."""
        if self._loop is None:
            self._loop = current_loop()

    def hold(self, fn: Callable[[int], object], n: int) -> None:
        """Call ``fn(n)`` with this drain held, then drain: items that *fn* makes arrive on
        this stack (a request to a synchronous upstream) go out in one pass rather than one by
        one. Inside a pass it is a plain call."""
        if self._draining:
            fn(n)
            return
        self._draining = True
        try:
            fn(n)
        finally:
            self._draining = False
        self._drain()

    @property
    def idle(self) -> bool:
        """No pass is running or scheduled: a `signal` now drains on the caller's stack."""
        return not (self._draining or self._resume_scheduled)

    def signal_soon(self) -> None:
        """`signal` for an async boundary: drain from a fresh loop callback, never on the
        producer's stack; one callback serves every signal until it runs, and a pass that is
        running passes once more instead."""
        if self._draining:
            self._missed = True
        elif self._loop is None:
            self._drain()
        elif not self._resume_scheduled and not self._done:
            self._resume_scheduled = True
            self._loop.call_soon(self._resume)

    def _complete(self) -> None:
        """Signal ``on_complete`` (once) and release; nothing while an error is pending."""
        if self._fault is not None:
            # A source failed while this pass ran (a re-request made it pull its next item):
            # the drain signals that error; completing would leave it nobody to go to.
            return
        downstream = self._terminate()
        if downstream is not None:
            try:
                downstream.on_complete()
            except Exception as exc:
                name = raising_subscriber(exc, "on_complete", downstream)
                report_error(exc, f"{name}.on_complete raised (rule 2.13)", self._loop)

    def _error(self, error: BaseException) -> None:
        """Signal ``on_error`` (once) and release; after termination the error is reported."""
        error = stream_error(error)
        downstream = self._terminate()
        if downstream is None:
            report_late_error(error, self._loop)
            return
        try:
            downstream.on_error(error)
        except Exception as exc:
            name = raising_subscriber(exc, "on_error", downstream)
            report_error(exc, f"{name}.on_error raised (rule 2.13)", self._loop)

    def _emit_from(self, items: deque[T], limit: int) -> int:
        """Hand up to *limit* items from the queue *items* to the subscriber; return how many.

        The one emit loop of every subscription that emits items it holds (a synchronous
        source's items are pulled by its `SyncInner` instead). It stops as soon as ``on_next``
        cancels or fails the stream, or empties the queue (a source switched away from).
        """
        available = len(items)
        stop = limit if limit < available else available
        if stop <= 0:
            return 0
        downstream = self._downstream
        assert downstream is not None
        on_next = downstream.on_next
        count = 0
        # (the producer checked for None; what on_next raises, the drain reports: rule 2.13)
        for item in iter(items.popleft, _EMPTY):
            count += 1
            on_next(item)
            if count == stop or self._done or not items:
                break
        return count

    def _emit_now(self, queue: deque[T]) -> bool:
        """The fast path of `signal` for an item that arrived alone in *queue*: hand it to the
        subscriber at once, without a drain pass, when no drain is running or scheduled and
        there is demand. The caller knows whether this queue may go first. Returns False when
        the caller must `signal` instead.
        """
        if (
            self._draining
            or self._context is not None  # (signals go through a pass, inside the context)
            or not self._requested
            or self._done
            or self._resume_scheduled
            or len(queue) != 1
        ):
            return False
        downstream = self._downstream
        assert downstream is not None
        self._missed = False
        self._draining = True  # a request from inside on_next only adds demand (rule 3.3)
        try:
            downstream.on_next(queue.popleft())
        except Exception as exc:
            self._draining = False
            self._subscriber_failed(exc, "on_next")
            return True
        current = self._requested  # (`produced` inlined: the one-item fast path)
        if 0 < current < MAX_DEMAND:  # 0: cancelled from inside on_next
            self._requested = current - 1
        self._draining = False
        if self._missed or self._fault is not None:
            self._drain()  # something happened meanwhile: more demand, an event, an error
        return True

    def _drain(self) -> None:
        """Something changed (demand, an item, the end of the source): drain now, or, when a
        drain is already running further up this stack, have it pass once more."""
        if self._draining:
            self._missed = True
            return
        context = self._context
        if context is not None:  # one Context.run per pass, not per item
            self._context = None  # (the pass below is inside it already)
            try:
                context.run(self._drain)
            finally:
                self._context = context
            return
        self._draining = True
        try:
            budget = DRAIN_BATCH
            emit = self._emit
            while True:
                if self._fault is not None:
                    fault, self._fault = self._fault, None
                    self._error(fault)
                    return
                if self._done:
                    return
                self._missed = False
                requested = self._requested
                limit = requested if requested < budget else budget
                self._budget = budget
                emitted = emit(limit)
                budget = self._budget - emitted  # (emit took off what it dropped)
                if emitted:  # (`produced` inlined: once per pass of every drain, benchmarked)
                    current = self._requested
                    if current != MAX_DEMAND:
                        self._requested = current - emitted
                # (an error that came during the pass set _done: it is signalled now, not left
                # to a resume that _done would keep from being scheduled)
                if budget <= 0 and self._fault is None:
                    if self._loop is not None:
                        if not self._resume_scheduled and not self._done:
                            self._resume_scheduled = True
                            self._loop.call_soon(self._resume)
                        return
                    budget = DRAIN_BATCH
                    continue  # (no loop to yield to) whatever used the budget may go on
                if emitted == limit and emitted:
                    continue  # demand ran out, or more may be waiting: look again
                if not self._missed and self._fault is None:
                    # The pass emitted what there was; a request or signal since would have set
                    # _missed, so nothing is waiting until the next one.
                    return
        except Exception as exc:
            self._subscriber_failed(exc, "on_next")
        finally:
            self._draining = False

    signal = _drain
    """What producers call: something changed at the source."""

    # -- internals ----------------------------------------------------------------------

    def _resume(self) -> None:
        self._resume_scheduled = False
        self._drain()

    def _terminate(self) -> Subscriber[T] | None:
        """Mark done, drop the subscriber, release resources; return the old subscriber."""
        downstream = self._downstream
        if downstream is None:
            return None
        self._done = True
        self._downstream = None
        self._requested = 0
        try:
            self._release()
        except Exception as exc:  # cancel must return normally (rule 3.15)
            report_error(exc, f"{type(self).__name__} failed to release its resources", self._loop)
        return downstream

    def _subscriber_failed(self, error: Exception, signal: str) -> None:
        downstream = self._downstream
        self._terminate()
        name = raising_subscriber(error, signal, downstream)
        report_error(
            error,
            f"{name}.{signal} raised; its subscription is cancelled (rule 2.13)",
            self._loop,
        )
