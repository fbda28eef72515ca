"""`LockstepDrain`: the drain of a sharing point, one queue emitted to many subscribers at once.

A hot processor (``MulticastProcessor``, and ``share``/``publish`` over it) receives items from
one upstream and hands each of them to every current subscriber, in lockstep: an item goes
out only when every subscriber has demand for it, so the slowest sets the pace and nobody skips
one. `LockstepDrain` is that shape on the one trampoline of `DrainSubscription`:

* the drain's own demand is unbounded: what bounds a pass is the smallest outstanding demand
  over the subscribers (recounted when one comes, goes or requests, never per item), the queue
  and the trampoline's budget, after which it yields to the loop as every drain does;
* a pass takes that many items off the queue as one batch and emits the batch subscriber by
  subscriber, each inside the `contextvars` context its subscriber subscribed in (one
  ``Context.run`` per subscriber and batch); an item that arrives alone while nothing waits
  takes the trampoline's one-item fast path (`DrainSubscription._emit_now`), a batch of one;
* what left the queue is told to the owner (who re-requests upstream) from the pass that
  emitted it, or, for the one-item path, from a loop callback with the drain held, so that a
  synchronous upstream refills the queue inside that request and its items go out in batches;
* after the queued items, the terminal signal of `LockstepDrain.finish` reaches every subscriber
  (in its context); one that arrives after it gets ``on_subscribe`` and then that signal.

Each subscriber holds a `LockstepSubscription`: a `DrainSubscription` that owns the subscriber's
side (``on_subscribe`` first, rule 3.9, hand-over of foreign-thread requests, cancel, rule
2.13) and emits nothing through its own pass: it joins the drain, tells it of new demand and
leaves. Its demand only grows; what is outstanding is that less the items emitted since it
joined. The owner (the processor) fills the queue with `LockstepDrain.push`, ends it with
`LockstepDrain.finish`, and hears through *on_consumed* how many items left the queue (to
re-request upstream) and through *on_abandoned* that the last subscriber left.
"""

from __future__ import annotations

import contextvars
from collections import deque
from collections.abc import Callable
from typing import ClassVar, Generic, TypeVar, final

import attrs

from ._demand import MAX_DEMAND, produced
from ._drain import DrainSubscription
from ._scan import StageScan
from ._spec import Subscriber, Subscription

__all__ = ("LockstepDrain", "LockstepSubscription")

T = TypeVar("T")


def _nothing(n: int = 0) -> None:
    pass


@final
@attrs.define(eq=False)
class _FanOut(Generic[T]):
    """The lockstep drain's own subscriber: its ``on_next`` is `LockstepDrain._emit_one`, so
    the trampoline's one-item fast path hands an item to every subscriber."""

    on_next: Callable[[T], None]

    def on_subscribe(self, subscription: Subscription) -> None:
        """Never signalled: the drain is not started, its subscribers are."""

    def on_error(self, error: BaseException) -> None:
        """Never signalled: the drain ends its subscribers one by one."""

    def on_complete(self) -> None:
        """Never signalled: the drain ends its subscribers one by one."""


@final
@attrs.define(eq=False)
class LockstepDrain(DrainSubscription[T], Generic[T]):
    """A queue emitted in lockstep to every current subscriber (see the module docstring).

    Args:
        capacity: the most items the queue holds; `push` refuses one more.
        on_consumed: called with the number of items that left the queue after each batch.
        on_abandoned: called when the last subscriber leaves.
        owner: the stage this hub serves (a processor): where a scan of a subscriber walks on.
    """

    _downstream: Subscriber[T] | None = attrs.field(init=False)
    _requested: int = attrs.field(default=MAX_DEMAND, init=False)
    """Unbounded: the subscribers' smallest demand (`_ready`) bounds a pass."""
    _capacity: int = attrs.field(kw_only=True, alias="capacity")
    _on_consumed: Callable[[int], object] = attrs.field(
        default=_nothing, kw_only=True, alias="on_consumed"
    )
    _on_abandoned: Callable[[], object] = attrs.field(
        default=_nothing, kw_only=True, alias="on_abandoned"
    )
    _owner: object = attrs.field(default=None, kw_only=True, alias="owner")
    _queue: deque[T] = attrs.field(factory=deque, init=False)
    _subscribers: tuple[LockstepSubscription[T], ...] | None = attrs.field(default=(), init=False)
    """Current subscribers (copy-on-write); ``None`` once they were sent the terminal signal."""
    _emitted: int = attrs.field(default=0, init=False)
    """Items emitted since the start (see `LockstepSubscription.outstanding`)."""
    _ready: int = attrs.field(default=0, init=False)
    """The smallest outstanding demand among the subscribers: items that may go out now."""
    _stale: bool = attrs.field(default=False, init=False)
    """A subscriber came, went or requested: `_ready` is recounted before the next item."""
    _finished: bool = attrs.field(default=False, init=False)
    _unreported: int = attrs.field(default=0, init=False)
    """Items the one-item path emitted and `_report` has not told *on_consumed* of yet."""
    _report_scheduled: bool = attrs.field(default=False, init=False)
    failure: BaseException | None = attrs.field(default=None, init=False)
    """The error `finish` ends the subscribers with (None: completion)."""

    def __attrs_post_init__(self) -> None:
        self._downstream = _FanOut[T](self._emit_one)

    # -- state --------------------------------------------------------------------------

    def scan_stage(self) -> StageScan:
        """The queue and its bound, the items emitted, and how many subscribers share them
        (their demand is theirs: the hub's own is unbounded)."""
        return attrs.evolve(
            super().scan_stage(),
            demand=None,
            buffered=len(self._queue),
            capacity=self._capacity,
            emitted=self._emitted,
            tags=(("subscribers", str(self.subscriber_count)),),
        )

    @property
    def buffered(self) -> int:
        """Items waiting until every subscriber has demand."""
        return len(self._queue)

    @property
    def subscriber_count(self) -> int:
        """Subscribers currently joined."""
        subscribers = self._subscribers
        return len(subscribers) if subscribers is not None else 0

    @property
    def terminated(self) -> bool:
        """True once every subscriber was sent the terminal signal."""
        return self._subscribers is None

    @property
    def emitted(self) -> int:
        """Items emitted since the start."""
        return self._emitted

    # -- the owner's side ---------------------------------------------------------------

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        """Signal ``on_subscribe`` to *subscriber*; it joins right after (or gets the terminal
        signal)."""
        LockstepSubscription[T](subscriber, hub=self).start()

    def push(self, item: T) -> bool:
        """Queue *item* and emit what demand allows; False (and nothing queued) when full."""
        queue = self._queue
        if len(queue) >= self._capacity:
            return False
        queue.append(item)
        if self._stale:
            self._recount()
        if not self._ready or not self._emit_now(queue):
            self.signal()
        return True

    def finish(self, error: BaseException | None) -> None:
        """End every subscriber after the queued items: ``on_error(error)`` or ``on_complete``."""
        self._finished = True
        self.failure = error
        self.signal()

    def clear(self) -> None:
        """Drop the queued items (a failure that must not wait behind them)."""
        self._queue.clear()

    # -- the subscriptions' side --------------------------------------------------------

    def join(self, subscription: LockstepSubscription[T]) -> bool:
        """Add *subscription* to those emitted to; False once terminated."""
        subscribers = self._subscribers
        if subscribers is None:
            return False
        self._subscribers = (*subscribers, subscription)
        self.demand_changed()
        return True

    def leave(self, subscription: LockstepSubscription[T]) -> None:
        """Stop emitting to *subscription* (cancelled or failed)."""
        subscribers = self._subscribers
        if subscribers is None or subscription not in subscribers:
            return
        remaining = tuple(s for s in subscribers if s is not subscription)
        self._subscribers = remaining
        if not remaining:
            self._on_abandoned()
        self.demand_changed()  # the slowest subscriber may have left

    def demand_changed(self) -> None:
        """A subscriber came, went or requested: recount, then emit what may go now."""
        self._stale = True
        self.signal()

    # -- DrainSubscription --------------------------------------------------------------

    def _emit(self, limit: int) -> int:
        subscribers = self._subscribers
        if subscribers is None:
            return 0
        if self._stale:
            self._recount()
        queue = self._queue
        count = min(self._ready, len(queue), limit)
        if count > 0:
            self._emitted += count
            self._ready = produced(self._ready, count)
            batch = [queue.popleft() for _ in range(count)]
            for subscription in subscribers:
                subscription.deliver(batch)
            self._on_consumed(count)
        if self._finished and not queue:
            ending = self._subscribers  # (with those who joined during the batch)
            self._subscribers = None
            self._ready = 0
            for subscription in ending or ():
                subscription.end(self.failure)
        return count

    def _release(self) -> None:
        self._queue.clear()

    # -- internals ----------------------------------------------------------------------

    def _recount(self) -> None:
        """Recompute `_ready` from the subscribers' demand (per request, never per item)."""
        self._stale = False
        subscribers = self._subscribers
        if not subscribers:
            self._ready = 0
            return
        emitted = self._emitted
        self._ready = min(s.outstanding(emitted) for s in subscribers)

    def _emit_one(self, item: T) -> None:
        """A batch of one, inlined: the path of an item that arrives while nothing waits."""
        self._emitted += 1
        ready = self._ready
        if ready != MAX_DEMAND:  # (`produced` inlined: once per item, benchmarked)
            self._ready = ready - 1
        subscribers = self._subscribers
        assert subscribers is not None  # (nothing is ready once terminated)
        for subscription in subscribers:
            on_next = subscription.receiver
            if on_next is None:
                continue  # cancelled while this item was going out
            try:
                subscription.run(on_next, item)
            except Exception as exc:
                subscription.failed(exc)
        # Told from a loop callback, with the drain held: the owner's replenishing request then
        # makes a synchronous upstream refill the queue inside it, and those items go out as
        # batches (a context switch per subscriber and batch, not per item) from then on.
        self._unreported += 1
        if not self._report_scheduled:
            loop = self._loop
            if loop is None:
                self._report()
            else:
                self._report_scheduled = True
                loop.call_soon(self._report)

    def _report(self) -> None:
        """Tell *on_consumed* what the one-item path emitted since the last report."""
        self._report_scheduled = False
        count, self._unreported = self._unreported, 0
        if count:
            self.hold(self._on_consumed, count)


@final
@attrs.define(eq=False)
class LockstepSubscription(DrainSubscription[T], Generic[T]):
    """One subscriber of a `LockstepDrain`, which emits to it in lockstep with the others.

    Nothing is emitted through this subscription's own pass, so its demand only ever grows:
    it is the subscriber's cumulative demand, and what is still outstanding is that less the
    items the drain emitted since it joined.
    """

    stage_operator: ClassVar[str] = "lockstep"
    _hub: LockstepDrain[T] = attrs.field(kw_only=True, alias="hub")
    subscriber_context: contextvars.Context = attrs.field(
        factory=contextvars.copy_context, init=False
    )
    """The context the subscriber subscribed in: every signal after ``on_subscribe`` runs
    inside it."""
    run: Callable[..., object] = attrs.field(init=False)
    """``subscriber_context.run``, bound once: the one-item path calls it per subscriber."""
    receiver: Callable[[T], object] | None = attrs.field(default=None, init=False)
    """The subscriber's ``on_next`` while it is joined; None before and once it left."""
    _joined_at: int = attrs.field(default=0, init=False)
    _joined: bool = attrs.field(default=False, init=False)

    def __attrs_post_init__(self) -> None:
        self.run = self.subscriber_context.run

    def scan_stage(self) -> StageScan:
        """This subscriber's demand left and what it received, from the hub's count; the
        hub's owner (or the hub) upstream."""
        hub = self._hub
        scan = super().scan_stage()
        if self._done or not self._joined:
            return attrs.evolve(scan, emitted=None, upstream=hub._owner or hub)
        emitted = hub._emitted
        return attrs.evolve(
            scan,
            demand=self.outstanding(emitted),
            emitted=emitted - self._joined_at,
            upstream=hub._owner or hub,
        )

    def outstanding(self, emitted: int) -> int:
        """The demand left, *emitted* being the drain's count of items emitted."""
        return produced(self._requested, emitted - self._joined_at)

    def deliver(self, batch: list[T]) -> None:
        """Hand *batch* to the subscriber inside its context; stop if it cancels."""
        on_next = self.receiver
        if on_next is not None:
            self.run(self._deliver, on_next, batch)

    def failed(self, error: Exception) -> None:
        """The subscriber's ``on_next`` raised: it is cancelled and the error reported."""
        self._subscriber_failed(error, "on_next")

    def end(self, failure: BaseException | None) -> None:
        """Signal ``on_error(failure)`` or ``on_complete`` inside the subscriber's context."""
        if self._downstream is not None:
            self.run(self._end, failure)

    def _deliver(self, on_next: Callable[[T], object], batch: list[T]) -> None:
        try:
            for item in batch:
                on_next(item)
                if self._done:
                    return
        except Exception as exc:
            self._subscriber_failed(exc, "on_next")

    def _end(self, failure: BaseException | None) -> None:
        if failure is None:
            self._complete()
        else:
            self._error(failure)

    def _emit(self, limit: int) -> int:
        if self._joined:
            self._hub.demand_changed()
            return 0
        # The first pass, right after on_subscribe: join, or end at once (terminated).
        self._joined = True
        hub = self._hub
        self._joined_at = hub.emitted
        downstream = self._downstream
        assert downstream is not None
        self.receiver = downstream.on_next
        if not hub.join(self):
            self.receiver = None
            self._end(hub.failure)
        return 0

    def _release(self) -> None:
        self.receiver = None
        if self._joined:
            self._hub.leave(self)
