"""`QueueDrain`: the downstream side of an operator that emits at its own pace.

Time operators produce items from timer callbacks (a batch is due, a debounce window
closed), not from the upstream's ``on_next``. They ``push`` those items here; the inherited
drain emits them as downstream demand allows, with the usual trampoline (rule 3.3) and
thread hand-over. Completion is delivered once the queue is empty; an error as soon as the
items downstream already asked for have been emitted. More than *capacity* held items is an
overflow: `MissingBackpressureError` (for operators whose upstream is not bounded by demand).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar, final

import attrs

from ._checks import require_not_none
from ._demand import MAX_DEMAND
from ._drain import DrainSubscription
from ._exceptions import MissingBackpressureError
from ._loop import current_thread, hand_over
from ._report import report_error
from ._spec import Subscriber, Subscription

__all__ = ("QueueDrain", "QueueOperator")

T = TypeVar("T")
R = TypeVar("R")


def _nothing(n: int = 0) -> None:
    pass


@final
@attrs.define(eq=False)
class QueueDrain(DrainSubscription[T], Generic[T]):
    """A subscription that emits pushed items within demand.

    Args:
        downstream: the subscriber served.
        capacity: most items held for lack of demand before overflowing.
        on_request: called with every valid ``request(n)`` after the demand is added
            (operators forward demand upstream from here).
        on_release: called once when cancelled or terminated (cancel upstream, disarm timers).
        what: the operator's name, for error messages.
    """

    _capacity: int = attrs.field(default=MAX_DEMAND, kw_only=True, alias="capacity")
    _on_request: Callable[[int], object] = attrs.field(
        default=_nothing, kw_only=True, alias="on_request"
    )
    _on_release: Callable[[], object] = attrs.field(
        default=_nothing, kw_only=True, alias="on_release"
    )
    _what: str = attrs.field(default="operator", kw_only=True, alias="what")
    _queue: deque[T] = attrs.field(factory=deque, init=False)
    _finished: bool = attrs.field(default=False, init=False)
    _failure: BaseException | None = attrs.field(default=None, init=False)

    @property
    def demand(self) -> int:
        """Outstanding downstream demand not yet covered by held items."""
        held = len(self._queue)
        requested = self._requested
        return requested if requested == MAX_DEMAND else max(requested - held, 0)

    @property
    def held(self) -> int:
        """Items waiting for demand."""
        return len(self._queue)

    def push(self, item: T) -> None:
        """Queue *item* and emit what demand allows; overflow fails the stream."""
        if self._done or self._finished:
            return
        if len(self._queue) >= self._capacity:
            self.finish(
                MissingBackpressureError(
                    f"{self._what}: downstream has no demand and {self._capacity} items are "
                    "already held"
                )
            )
            return
        self._queue.append(item)
        self._drain()

    def finish(self, error: BaseException | None = None) -> None:
        """Upstream ended: complete after the held items, or fail after those requested."""
        if self._done or self._finished:
            return
        self._finished = True
        self._failure = error
        self._drain()

    def request(self, n: int) -> None:
        if self._thread != current_thread() and hand_over(
            self._loop, self._thread, self.request, n
        ):
            return
        super().request(n)
        if n > 0 and not self._done:
            self._on_request(n)

    def _emit(self, limit: int) -> int:
        queue = self._queue
        emitted = 0
        if queue and limit:
            downstream = self._downstream
            assert downstream is not None
            on_next = downstream.on_next
            popleft = queue.popleft
            while queue and emitted < limit:
                on_next(popleft())
                emitted += 1
                if self._done:
                    return emitted
        if self._finished:
            failure = self._failure
            left = self._requested
            if left != MAX_DEMAND:
                left -= emitted
            if failure is not None and (not queue or left <= 0):
                self._error(failure)
            elif not queue:
                self._complete()
        return emitted

    def _release(self) -> None:
        self._queue.clear()
        release, self._on_release = self._on_release, _nothing
        release()


@attrs.define(eq=False)
class QueueOperator(Subscriber[T], Generic[T, R]):
    """The upstream half of an operator whose downstream half is a `QueueDrain`.

    It keeps the first upstream subscription (rule 2.5), starts the `QueueDrain` (which
    signals ``on_subscribe`` downstream), and on release cancels an upstream that has not
    terminated. Subclasses implement ``on_next`` and may override the hooks `_started`,
    `_requested_more`, `_ending` and `_stopped`.
    """

    _downstream: Subscriber[R]
    _out: QueueDrain[R] = attrs.field(init=False)
    _upstream: Subscription | None = attrs.field(default=None, init=False)
    _upstream_done: bool = attrs.field(default=False, init=False)

    def __attrs_post_init__(self) -> None:
        self._out = QueueDrain(
            self._downstream,
            capacity=self._capacity(),
            on_request=self._requested_more,
            on_release=self._released,
            what=self._name(),
        )

    # -- hooks --------------------------------------------------------------------------

    def _name(self) -> str:
        return type(self).__name__

    def _capacity(self) -> int:
        return MAX_DEMAND

    def _started(self, upstream: Subscription) -> None:
        """After ``on_subscribe`` went downstream: request upstream, arm timers."""

    def _requested_more(self, n: int) -> None:
        """Downstream asked for *n* more (valid) items."""

    def _ending(self, error: BaseException | None) -> None:
        """Upstream terminated: flush what is pending, then ``self._out.finish(error)``."""
        self._out.finish(error)

    def _stopped(self) -> None:
        """Cancelled or terminated downstream: disarm timers, drop state."""

    # -- Subscriber ---------------------------------------------------------------------

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "2.13", "on_subscribe's subscription")
        if self._upstream is not None:
            subscription.cancel()
            return
        self._upstream = subscription
        self._out.start()
        if not self._out.done:
            self._started(subscription)

    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        if self._upstream_done:
            report_error(error, f"{self._name()} received an error after it finished")
            return
        self._upstream_done = True
        self._ending(error)

    def on_complete(self) -> None:
        if self._upstream_done:
            return
        self._upstream_done = True
        self._ending(None)

    # -- internals ----------------------------------------------------------------------

    def _released(self) -> None:
        self._stopped()
        upstream = self._upstream
        if upstream is not None and not self._upstream_done:
            self._upstream_done = True
            upstream.cancel()
