"""`BufferOperator`: the upstream half of an operator that emits at its own pace.

Time operators produce items from timer callbacks (a batch is due, a debounce window
closed), not from the upstream's ``on_next``. They push those items into a `HookedDrain`,
a `BufferDrain` that emits them as downstream demand allows (trampolined, thread hand-over,
terminal signal after the buffered items) and adds three things operators need:

* a *capacity*: more than that many held items is an overflow: the held items are dropped
  and the stream fails at once with `MissingBackpressureError` (for operators whose upstream
  is not bounded by demand);
* an ``on_request`` hook, called with every valid ``request(n)`` (to forward demand);
* an ``on_release`` hook, called once on cancel or termination (cancel upstream, disarm
  timers).

`BufferOperator` is the matching upstream subscriber: set-once ``on_subscribe`` (rule 2.5),
starts the drain, and cancels an upstream that has not terminated when the drain is released.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar, final

import attrs

from ._buffer_drain import BufferDrain
from ._checks import require_not_none
from ._demand import MAX_DEMAND
from ._exceptions import MissingBackpressureError
from ._loop import current_loop, hand_over
from ._report import report_error
from ._spec import Subscriber, Subscription

__all__ = ("BufferOperator", "HookedDrain")

T = TypeVar("T")
R = TypeVar("R")


def _nothing(n: int = 0) -> None:
    pass


@final
@attrs.define(eq=False)
class HookedDrain(BufferDrain[T], Generic[T]):
    """A `BufferDrain` with a capacity and request/release hooks (see the module docstring)."""

    _capacity: int = attrs.field(default=MAX_DEMAND, kw_only=True, alias="capacity")
    _on_request: Callable[[int], object] = attrs.field(
        default=_nothing, kw_only=True, alias="on_request"
    )
    _on_release: Callable[[], object] = attrs.field(
        default=_nothing, kw_only=True, alias="on_release"
    )
    _what: str = attrs.field(default="operator", kw_only=True, alias="what")

    def push(self, item: T) -> None:
        """Buffer *item* and emit what demand allows; beyond *capacity* the stream fails."""
        if self.buffered >= self._capacity and not self.finished:
            # The overflow error must not wait behind the held items for demand that may
            # never come: drop them and fail at once (on_error needs no demand).
            self._queue.clear()
            self.finish(
                MissingBackpressureError(
                    f"{self._what}: the subscriber has no demand and {self._capacity} items "
                    "are already held"
                )
            )
            return
        super().push(item)

    def request(self, n: int) -> None:
        if current_loop() is not self._loop and hand_over(self._loop, self.request, n):
            return
        super().request(n)
        if not self._done:  # a bad n failed the stream above, so here n is an int > 0
            self._on_request(n)

    def _release(self) -> None:
        super()._release()
        # Both hooks are bound to the operator, which references downstream: let go of them,
        # so a caller still holding this subscription does not keep the subscriber (rule 3.13).
        self._on_request = _nothing
        release, self._on_release = self._on_release, _nothing
        release()


@attrs.define(eq=False)
class BufferOperator(Subscriber[T], Generic[T, R]):
    """The upstream half of an operator whose downstream half is a `HookedDrain`.

    Subclasses implement ``on_next`` and may override the hooks `_name`, `_capacity`,
    `_started`, `_requested_more`, `_ending` and `_stopped`.
    """

    _downstream: Subscriber[R]
    _out: HookedDrain[R] = attrs.field(init=False)
    _upstream: Subscription | None = attrs.field(default=None, init=False)
    _upstream_done: bool = attrs.field(default=False, init=False)

    def __attrs_post_init__(self) -> None:
        self._out = HookedDrain(
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
