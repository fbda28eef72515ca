"""`ArbiterSubscriber`: one downstream subscription over a series of upstream subscriptions.

Operators that subscribe to several publishers one after another (``retry``, ``start_with``,
``on_error_resume``, ``using``) present a single subscription downstream. The arbiter keeps
the downstream demand that is still outstanding (requested minus delivered) and asks each new
upstream for exactly that, so items already delivered are never requested again. Switching is
trampolined: a publisher that terminates inside ``subscribe`` does not grow the stack; after
`SYNC_SWITCHES` such switches in a row the next one is subscribed from the event loop, so a
source that ends at once, retried or repeated for ever, never holds the loop (rule 3.4).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import attrs

from ._attach import attach
from ._checks import request_error, require_not_none
from ._demand import MAX_DEMAND, add_demand
from ._detached import DETACHED
from ._exceptions import InvalidRequestError, stream_error
from ._loop import current_loop, hand_over
from ._report import report_error
from ._scan import StageScan, operator_name
from ._spec import Publisher, Subscriber, Subscription

__all__ = ("SYNC_SWITCHES", "ArbiterSubscriber")

T = TypeVar("T")

SYNC_SWITCHES = 16
"""Upstreams subscribed in one synchronous pass. Each one itself yields after ``DRAIN_BATCH``
items, so a pass emits at most ``SYNC_SWITCHES * DRAIN_BATCH`` items before the loop runs."""


@attrs.define(eq=False)
class ArbiterSubscriber(Subscriber[T], Subscription, Generic[T]):
    """Subscribes to publishers one at a time and carries demand across them.

    Subclasses override `on_error`/`on_complete` to decide what follows an upstream's end
    (call `_switch_to`, `_finish_complete` or `_finish_error`) and may override `_on_end`,
    which runs once when the downstream subscription ends (terminated or cancelled). Once it
    ended, the arbiter references neither downstream nor upstream (rule 3.13).
    """

    _downstream: Subscriber[T]
    _next: Callable[[Any], None] = attrs.field(init=False)
    _upstream: Subscription | None = attrs.field(default=None, init=False)
    _requested: int = attrs.field(default=0, init=False)
    """Downstream demand not yet met by an item."""
    _started: bool = attrs.field(default=False, init=False)
    _in_on_subscribe: bool = attrs.field(default=False, init=False)
    _bad_request: InvalidRequestError | None = attrs.field(default=None, init=False)
    _done: bool = attrs.field(default=False, init=False)
    _switching: bool = attrs.field(default=False, init=False)
    _pending: Publisher[T] | None = attrs.field(default=None, init=False)
    _loop: asyncio.AbstractEventLoop | None = attrs.field(factory=current_loop, init=False)

    def __attrs_post_init__(self) -> None:
        self._next = self._downstream.on_next

    # -- downstream side ----------------------------------------------------------------

    def start(self) -> None:
        """Signal ``on_subscribe`` downstream before any upstream exists."""
        self._signal_on_subscribe()

    def request(self, n: int) -> None:
        """Record demand and pass it to the current upstream; anything but an int > 0 fails
        (rule 3.9)."""
        if hand_over(self._loop, self.request, n) or self._done:
            return
        if type(n) is not int or n <= 0:
            if self._in_on_subscribe:
                self._bad_request = request_error(n)  # signalled after on_subscribe (rule 1.3)
            else:
                self._cancel_upstream()
                self._finish_error(request_error(n))
            return
        self._requested = add_demand(self._requested, n)
        upstream = self._upstream
        if upstream is not None:
            upstream.request(n)

    def cancel(self) -> None:
        """Cancel the current upstream and stop; idempotent and thread-safe."""
        if hand_over(self._loop, self.cancel) or self._done:
            return
        self._mark_done()
        self._pending = None
        self._cancel_upstream()
        self._end()

    # -- upstream side ------------------------------------------------------------------

    def on_subscribe(self, subscription: Subscription) -> None:
        """Adopt *subscription* as the current upstream and ask it for the outstanding demand."""
        require_not_none(subscription, "2.13", "on_subscribe's subscription")
        if self._done or self._upstream is not None:
            subscription.cancel()  # rule 2.5, or we have already ended
            return
        if not self._started:
            self._signal_on_subscribe()
            if self.done:  # cancelled or failed from inside on_subscribe
                subscription.cancel()
                return
        self._upstream = subscription
        requested = self._requested
        if requested:
            subscription.request(requested)

    def on_next(self, item: T) -> None:
        """Count the item against the outstanding demand and pass it on."""
        requested = self._requested
        if requested != MAX_DEMAND:  # (`produced` inlined: once per item, benchmarked)
            self._requested = requested - 1
        self._next(item)

    def on_error(self, error: BaseException) -> None:
        """By default the error ends the stream."""
        require_not_none(error, "2.13", "on_error's error")
        self._finish_error(error)

    def on_complete(self) -> None:
        """By default completion ends the stream."""
        self._finish_complete()

    def scan_stage(self) -> StageScan:
        """The demand carried across upstreams, and the current upstream."""
        done = self._done
        return StageScan(
            operator=operator_name(type(self)),
            state="ended" if done else "active",
            demand=None if done else self._requested,
            upstream=self._upstream,
            loop=self._loop,
        )

    # -- helpers for subclasses ---------------------------------------------------------

    @property
    def done(self) -> bool:
        """True once the downstream subscription ended."""
        return self._done

    def _switch_to(self, publisher: Publisher[T]) -> None:
        """Drop the current upstream (it has terminated) and subscribe to *publisher*."""
        self._pending = publisher
        if self._switching:
            return  # the loop below, further up the stack, subscribes it
        self._switching = True
        switches = 0
        try:
            while (pending := self._pending) is not None and not self._done:
                switches += 1
                if switches > SYNC_SWITCHES and self._loop is not None:
                    self._upstream = None  # the one that just ended
                    self._loop.call_soon(self._resume_switching)
                    return  # the pending publisher stays pending until then
                self._pending = None
                self._upstream = None
                try:
                    pending.subscribe(self)
                except Exception as exc:  # a broken publisher (rule 1.9): fail, don't raise
                    self._finish_error(exc)
        finally:
            self._switching = False

    def _resume_switching(self) -> None:
        pending = self._pending
        if pending is not None and not self._done and not self._switching:
            self._switch_to(pending)

    def _finish_complete(self) -> None:
        if self._done:
            return
        downstream = self._mark_done()
        self._upstream = None
        try:
            downstream.on_complete()
        finally:
            self._end()

    def _finish_error(self, error: BaseException) -> None:
        if self._done:
            report_error(error, f"{type(self).__name__} failed after it finished", self._loop)
            return
        downstream = self._mark_done()
        self._upstream = None
        try:
            downstream.on_error(stream_error(error))
        finally:
            self._end()

    def _on_end(self) -> None:
        """Runs once when the downstream subscription ends; override to release resources."""

    # -- internals ----------------------------------------------------------------------

    def _signal_on_subscribe(self) -> None:
        self._started = True
        if not attach(self._downstream, self):  # subscribed twice (rules 1.10, 2.12)
            self.cancel()
            return
        self._in_on_subscribe = True
        try:
            self._downstream.on_subscribe(self)
        finally:
            self._in_on_subscribe = False
        bad = self._bad_request
        if bad is not None and not self._done:
            self._cancel_upstream()
            self._finish_error(bad)

    def _mark_done(self) -> Subscriber[T]:
        """Stop forwarding and detach downstream (rules 2.8, 3.13); return it."""
        downstream = self._downstream
        self._done = True
        self._next = DETACHED.on_next
        self._downstream = DETACHED
        return downstream

    def _cancel_upstream(self) -> None:
        upstream, self._upstream = self._upstream, None
        if upstream is not None:
            upstream.cancel()

    def _end(self) -> None:
        try:
            self._on_end()
        except Exception as exc:
            report_error(exc, f"{type(self).__name__} failed to release its resources", self._loop)
