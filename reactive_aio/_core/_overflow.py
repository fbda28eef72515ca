"""`Overflow`: what a push source or a backpressure operator does with items nobody asked for.

An item that arrives without downstream demand waits in a buffer of ``max_size`` items; when
the buffer is full, ``then`` decides: ``"drop_oldest"`` evicts the oldest buffered item,
``"drop_latest"`` drops the new one, ``"error"`` fails the stream with
`MissingBackpressureError` after the buffered items. `Overflow.DROP` is a zero-size buffer
that drops, `Overflow.LATEST` keeps only the newest item, `Overflow.ERROR` fails at once.

`OverflowDrain` applies a policy on top of `BufferDrain` and keeps exact counts: every item
offered is delivered, dropped, or still buffered (``offered == delivered + dropped +
buffered``). Offered from another thread, the policy acts on that thread and only what it
keeps is handed to the loop, through a bounded hand-off.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Any, ClassVar, Generic, Literal, TypeVar, final

import attrs

from ._buffer_drain import BufferDrain
from ._checks import require_not_none
from ._demand import MAX_DEMAND
from ._drain import DRAIN_BATCH
from ._exceptions import MissingBackpressureError, short_repr
from ._loop import current_loop, hand_over
from ._loop_boundary import HandsOver
from ._spec import Subscriber, Subscription

__all__ = ("HANDOFF", "Overflow", "OverflowDrain", "OverflowSubscriber", "OverflowThen")

T = TypeVar("T")

HANDOFF = DRAIN_BATCH
"""Items a producer thread may have on their way to the loop before it waits for the loop."""

_RECHECK_S = 0.1
"""How often a producer thread waiting for room re-checks that the loop still runs."""

_NOTHING: Any = object()

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

    `offer_threadsafe` may be called from any thread. Outside the owning loop the policy acts
    on the calling thread: what it drops never reaches the loop, and what it keeps goes into
    a hand-off of at most `HANDOFF` items that the loop takes in batches (one wake-up per
    batch); a producer thread that fills the hand-off waits for the loop. Its decisions use
    the demand the loop last published, so an item racing a ``request`` may be judged before
    it; the loop applies the policy again when it takes the batch, which keeps the buffer
    bound and the counts exact.

    Subclasses override `_cancel_source` to stop their producer when the stream fails.
    """

    _policy: Overflow = attrs.field(kw_only=True, alias="policy")
    _on_dropped: Callable[[Any], object] | None = attrs.field(
        default=None, kw_only=True, alias="on_dropped"
    )
    offered: int = attrs.field(default=0, init=False)
    """Items offered on the loop while the stream was live."""
    dropped: int = attrs.field(default=0, init=False)
    """Items dropped by the policy on the loop (an item that caused an overflow error counts
    as dropped)."""
    dropped_off_loop: int = attrs.field(default=0, init=False)
    """Items the policy dropped on a producer thread, before they reached the loop."""
    _handoff: deque[T] = attrs.field(factory=deque, init=False)
    """Items a producer thread kept, waiting for the loop (guarded by ``_handoff_lock``)."""
    _handoff_lock: threading.Condition = attrs.field(factory=threading.Condition, init=False)
    _handoff_scheduled: bool = attrs.field(default=False, init=False)
    _handoff_closed: bool = attrs.field(default=False, init=False)
    """A producer thread failed the stream: later items from threads are ignored."""

    @property
    def in_handoff(self) -> int:
        """Items kept on a producer thread and not yet taken by the loop."""
        return len(self._handoff)

    def offer(self, item: T) -> bool:
        """Offer *item* on the owning loop: deliver it, buffer it, or apply the policy. False
        if it was dropped."""
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
        failure = self._tell_dropped(lost)
        if failure is None and then == "error":
            failure = self._overflow_error(item)
        if failure is not None:
            self._cancel_source()
            self.finish(failure)
            return False
        return then == "drop_oldest"

    def offer_threadsafe(self, item: T) -> None:
        """`offer` from any thread (see the class docstring)."""
        loop = self._loop
        if loop is None or current_loop() is loop or loop.is_closed():
            self.offer(item)
            return
        policy = self._policy
        lost: Any = _NOTHING
        with self._handoff_lock:
            while True:
                if self._finished or self._done or self._handoff_closed:
                    return
                handoff = self._handoff
                held = len(handoff)
                outstanding = self._requested - len(self._queue)
                covered = outstanding if outstanding > 0 else 0  # kept items that find demand
                if held < covered + policy.max_size:
                    if held >= HANDOFF and loop.is_running():
                        # the loop takes the batch, then notifies; a loop that stops or closes
                        # meanwhile ends the wait at the next re-check
                        self._handoff_lock.wait(_RECHECK_S)
                        continue
                    handoff.append(item)
                elif policy.then == "drop_oldest":
                    if held > covered:  # the oldest buffered item is here, not on the loop
                        lost = handoff[covered]
                        del handoff[covered]
                    handoff.append(item)  # otherwise the loop evicts its own oldest
                else:
                    lost = item
                    if policy.then == "error":
                        self._handoff_closed = True
                if lost is not _NOTHING:
                    self.dropped_off_loop += 1
                schedule = bool(handoff) and not self._handoff_scheduled
                if schedule:
                    self._handoff_scheduled = True
                break
        if schedule and not hand_over(loop, self._take_handoff):
            self._take_handoff()  # the loop closed meanwhile
        if lost is _NOTHING:
            return
        failure = self._tell_dropped(lost)
        if failure is None and policy.then == "error":
            failure = self._overflow_error(item)
        if failure is not None:
            with self._handoff_lock:
                self._handoff_closed = True
            if not hand_over(loop, self._fail_from_thread, failure):
                self._fail_from_thread(failure)

    def _take_handoff(self) -> None:
        with self._handoff_lock:
            items, self._handoff = self._handoff, deque()
            self._handoff_scheduled = False
            self._handoff_lock.notify_all()
        for item in items:
            self.offer(item)

    def _fail_from_thread(self, failure: BaseException) -> None:
        if not (self._finished or self._done):
            self._cancel_source()
            self.finish(failure)

    def _tell_dropped(self, lost: T) -> BaseException | None:
        """Pass *lost* to ``on_dropped``; what it raises fails the stream (returned)."""
        callback = self._on_dropped
        if callback is not None:
            try:
                callback(lost)
            except Exception as exc:  # user code fails the stream, never the producer
                return exc
        return None

    def _overflow_error(self, item: T) -> MissingBackpressureError:
        return MissingBackpressureError(
            f"overflow: {short_repr(item)} arrived without demand and the buffer of "
            f"{self._policy.max_size} items is full"
        )

    def _release(self) -> None:
        super()._release()
        with self._handoff_lock:
            self._handoff.clear()
            self._handoff_lock.notify_all()  # producer threads waiting for room return

    def _cancel_source(self) -> None:
        """Stop the producer: the stream is failing."""


@attrs.define(eq=False)
class OverflowSubscriber(OverflowDrain[T], Subscriber[T], HandsOver, Generic[T]):
    """An `OverflowDrain` fed by an upstream that is asked for everything at once.

    What the ``on_backpressure_*`` operators are made of: the subscriber's demand is served
    from the buffer and whatever does not fit goes to the policy. It takes signals from any
    thread itself (`HandsOver`): a publisher of another library subscribes it without a loop
    boundary, so the policy acts on that publisher's thread.
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
        self.offer_threadsafe(item)

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
