"""`OperatorSubscriber`: the base of operators that sit between one upstream and one downstream.

The operator subscribes upstream and is itself the subscription its downstream sees, so
``request``/``cancel`` pass straight through unless the operator overrides them. Upstream
subscriptions of this library hand foreign-thread calls over to their loop, so a stateless
pass-through needs no marshalling of its own. An operator that shapes demand overrides
`OperatorSubscriber._request`, and its ``request`` becomes the entry point that hands a
foreign-thread request over to the owning loop first (one place for every operator).

Rules kept here for every 1:1 operator: a second subscription is cancelled (rule 2.5); a
downstream subscribed already is refused (rules 1.10, 2.12, see `attach`); the
terminal signal is forwarded once and nothing after it (rules 1.7, 2.4); items in flight after
a cancel are dropped quietly (rule 2.8); once cancelled or terminated the operator drops its
downstream and upstream, so a caller that still holds the subscription does not keep the
subscriber alive (rule 3.13); a processor passes an upstream error on at once (rules 4.1,
4.2); ``on_complete``/``on_error`` never call back into the subscription (rule 2.3).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar

import attrs

from ._attach import attach
from ._checks import require_not_none
from ._detached import DETACHED
from ._exceptions import stream_error
from ._loop import current_loop, hand_over
from ._report import report_error
from ._scan import StageScan, operator_name
from ._spec import Subscriber, Subscription

__all__ = ("OperatorSubscriber", "PassThroughSubscriber")

T = TypeVar("T")
T_contra = TypeVar("T_contra", contravariant=True)
R = TypeVar("R")


@attrs.define(eq=False)
class OperatorSubscriber(Subscriber[T], Subscription, Generic[T, R]):
    """A subscriber of ``T`` that emits ``R`` to one downstream subscriber.

    Subclasses implement ``on_next`` and forward with ``self._next(value)``, a bound
    ``downstream.on_next`` cached for the hot path and swapped for a no-op once the operator
    is done, so in-flight items after a cancel go nowhere. `_finish` swaps ``_downstream``
    for `DETACHED` and returns the real one, for the terminal signal that follows.
    """

    _downstream: Subscriber[R]
    _next: Callable[[Any], None] = attrs.field(init=False)
    _upstream: Subscription | None = attrs.field(default=None, init=False)
    _done: bool = attrs.field(default=False, init=False)
    _loop: asyncio.AbstractEventLoop | None = attrs.field(factory=current_loop, init=False)

    def __attrs_post_init__(self) -> None:
        self._next = self._downstream.on_next

    # -- upstream signals ---------------------------------------------------------------

    def on_subscribe(self, subscription: Subscription) -> None:
        """Keep the first subscription, cancel any later one (rule 2.5), then ``on_subscribe`` downstream."""
        require_not_none(subscription, "2.13", "on_subscribe's subscription")
        if self._upstream is not None or self._done:
            subscription.cancel()
            return
        self._upstream = subscription
        self._subscribe_downstream()

    def on_error(self, error: BaseException) -> None:
        """Pass the error on, once."""
        require_not_none(error, "2.13", "on_error's error")
        if self._done:
            report_error(
                error, f"{type(self).__name__} received an error after it finished", self._loop
            )
            return
        self._upstream = None
        self._finish().on_error(error)

    def on_complete(self) -> None:
        """Pass completion on, once."""
        if self._done:
            return
        self._upstream = None
        self._finish().on_complete()

    # -- downstream signals -------------------------------------------------------------

    def _request(self, n: int) -> None:
        """A request on the owning loop: forward it upstream unchanged. Operators that shape
        demand or keep request-side state override this, never ``request``."""
        upstream = self._upstream
        if upstream is not None:
            upstream.request(n)

    request = _request
    """A pass-through forwards at once: its upstream hands foreign-thread requests over."""

    def _request_on_loop(self, n: int) -> None:
        """``request`` of an operator that overrides `_request`: a foreign-thread request is
        handed over to the owning loop first, so request-side state is only touched there."""
        if current_loop() is not self._loop and hand_over(self._loop, self.request, n):
            return
        self._request(n)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "_request" in cls.__dict__ and "request" not in cls.__dict__:
            cls.request = OperatorSubscriber._request_on_loop

    def cancel(self) -> None:
        """Cancel upstream and stop forwarding."""
        if self._hand_over_cancel():
            return
        self._finish()
        self._cancel_upstream()

    def scan_stage(self) -> StageScan:
        """A pass-through holds nothing and keeps no count: its figures are upstream's; it
        only knows whether it ended (not how: one flag is all it keeps)."""
        return StageScan(
            operator=operator_name(type(self)),
            state="ended" if self._done else "active",
            upstream=self._upstream,
            loop=self._loop,
        )

    # -- helpers for subclasses ---------------------------------------------------------

    def _subscribe_downstream(self) -> None:
        """Signal ``on_subscribe`` downstream, unless it is subscribed already (rules 1.10,
        2.12: then it is refused and this operator cancels)."""
        if attach(self._downstream, self):
            self._downstream.on_subscribe(self)
        else:
            self.cancel()

    def _hand_over_cancel(self) -> bool:
        return hand_over(self._loop, self.cancel)

    def _finish(self) -> Subscriber[R]:
        """Mark done and detach downstream: later items go nowhere (rule 2.8) and a caller
        still holding this subscription does not keep the subscriber alive (rule 3.13).

        Returns the downstream subscriber, for the terminal signal that may follow.
        """
        downstream = self._downstream
        self._done = True
        self._next = DETACHED.on_next
        self._downstream = DETACHED
        return downstream

    def _cancel_upstream(self) -> None:
        upstream, self._upstream = self._upstream, None
        if upstream is not None:
            upstream.cancel()

    def _fail(self, error: BaseException) -> None:
        """A user callback raised: cancel upstream first, then ``on_error`` downstream."""
        error = stream_error(error)
        if self._done:
            report_error(error, f"{type(self).__name__} failed after it finished", self._loop)
            return
        downstream = self._finish()
        self._cancel_upstream()
        downstream.on_error(error)

    def _complete_early(self) -> None:
        """End the stream before upstream does (``take``): cancel upstream, then ``on_complete``."""
        if self._done:
            return
        downstream = self._finish()
        self._cancel_upstream()
        downstream.on_complete()


class _OnNext(Protocol[T_contra]):
    def __call__(self, item: T_contra) -> None: ...


@attrs.define(eq=False)
class PassThroughSubscriber(OperatorSubscriber[T, T]):
    """A stage that items never call: its ``on_next`` is downstream's own bound method, so
    upstream calls downstream directly, while the stage stands in the chain for ``request``,
    ``cancel`` and the terminal signals (a label, or a checkpoint that notes the errors
    passing it). It costs nothing per item. A stage that must see each item subclasses
    `OperatorSubscriber` instead: the instance's ``on_next`` hides any method of that name."""

    on_next: _OnNext[T] = attrs.field(init=False)
    """Downstream's own ``on_next`` (an instance attribute: upstream caches it at its own
    construction, which follows this one), a no-op once this stage is done."""

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        self.on_next = self._downstream.on_next

    def _finish(self) -> Subscriber[T]:
        downstream = super()._finish()
        self.on_next = self._downstream.on_next  # the no-op now (rule 3.13: downstream is not held)
        return downstream
