"""``with_latest_from``: pair every item with the latest item of another publisher.

Backpressure: pass-through for the main source; an item that arrives before *other* has
emitted anything is dropped and replaced with a ``request(1)`` upstream. *other* is requested
unbounded (only its latest item is kept).
Errors: an error of *other* cancels the main source, then ``on_error``; an error of the main
source cancels *other*. If *other* completes without ever emitting, no pair can form: the main
source is cancelled and the stream completes. Cancelling cancels both.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar, final

import attrs

from .._core import (
    MAX_DEMAND,
    OperatorSubscriber,
    Publisher,
    Subscriber,
    Subscription,
    report_error,
    require_not_none,
    require_publisher,
)

__all__ = ("WithLatestFromPublisher",)

T = TypeVar("T")
U = TypeVar("U")

_MISSING: Any = object()


@final
@attrs.frozen
class WithLatestFromPublisher(Publisher[tuple[T, U]], Generic[T, U]):
    """What `Flux.with_latest_from` returns."""

    source: Publisher[T]
    other: Publisher[U]

    def __attrs_post_init__(self) -> None:
        require_publisher(self.other, "with_latest_from")

    def subscribe(self, subscriber: Subscriber[tuple[T, U]]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        main = _WithLatestFromSubscriber[T, U](subscriber)
        other = _OtherSubscriber[U](main)
        main.other = other
        # The other source first, so that a value it has at once is there for the first item.
        self.other.subscribe(other)
        self.source.subscribe(main)


@final
@attrs.define(eq=False)
class _WithLatestFromSubscriber(OperatorSubscriber[T, tuple[T, U]], Generic[T, U]):
    other: _OtherSubscriber[U] | None = attrs.field(default=None, init=False)
    latest: Any = attrs.field(default=_MISSING, init=False)
    _pending_end: BaseException | bool = attrs.field(default=False, init=False)
    """How *other* ended before downstream was subscribed: an error, or True (empty)."""

    def on_subscribe(self, subscription: Subscription) -> None:
        super().on_subscribe(subscription)
        if self._upstream is not subscription:
            return
        pending = self._pending_end
        if isinstance(pending, BaseException):
            self._fail(pending)
        elif pending:
            self._complete_early()

    def on_next(self, item: T) -> None:
        latest = self.latest
        if latest is _MISSING:
            upstream = self._upstream
            if upstream is not None and not self._done:
                upstream.request(1)  # replaces the dropped item
            return
        self._next((item, latest))

    def other_failed(self, error: BaseException) -> None:
        if self._upstream is None:
            self._pending_end = error
        else:
            self._fail(error)

    def other_empty(self) -> None:
        if self._upstream is None:
            self._pending_end = True
        else:
            self._complete_early()

    def _finish(self) -> Subscriber[tuple[T, U]]:
        downstream = super()._finish()
        other, self.other = self.other, None
        if other is not None:
            other.cancel()
        return downstream


@final
@attrs.define(eq=False)
class _OtherSubscriber(Subscriber[U], Generic[U]):
    _main: _WithLatestFromSubscriber[Any, U]
    _upstream: Subscription | None = attrs.field(default=None, init=False)
    _done: bool = attrs.field(default=False, init=False)

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "2.13", "on_subscribe's subscription")
        if self._upstream is not None or self._done:
            subscription.cancel()  # rule 2.5, or the main stream already ended
            return
        self._upstream = subscription
        subscription.request(MAX_DEMAND)

    def on_next(self, item: U) -> None:
        if self._done:
            return
        if item is None:
            self.cancel()
            self._main.other_failed(TypeError("rule 2.13: the other publisher sent None"))
            return
        self._main.latest = item

    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        if self._done:
            report_error(error, "with_latest_from's other publisher failed after it ended")
            return
        self._done = True
        self._upstream = None
        self._main.other_failed(error)

    def on_complete(self) -> None:
        if self._done:
            return
        self._done = True
        self._upstream = None
        if self._main.latest is _MISSING:
            self._main.other_empty()

    def cancel(self) -> None:
        self._done = True
        upstream, self._upstream = self._upstream, None
        if upstream is not None:
            upstream.cancel()
