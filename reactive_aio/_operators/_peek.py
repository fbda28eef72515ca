"""``do_on_next``, ``do_on_error``, ``do_on_complete``, ``do_on_subscribe``, ``do_on_request``,
``do_on_cancel``: run a side effect on a signal and pass the signal on unchanged.

One operator (Reactor's ``peek``) with one optional callback per signal; each ``do_on_*``
method of `Flux` sets one of them. The callback runs before the signal is passed on:
``do_on_cancel``'s before upstream is cancelled.

Backpressure: pass-through.
Errors: a raising ``on_next``/``on_subscribe``/``on_request`` callback cancels upstream, then
signals ``on_error`` with its exception; a raising ``on_complete`` callback turns completion
into that error; a raising ``on_error`` callback is signalled instead of the original error
(which becomes its ``__context__``); a raising ``on_cancel`` callback is reported (logger and loop exception
handler): ``cancel`` must return normally (rule 3.15).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar, final

import attrs

from .._core import (
    OperatorSubscriber,
    Publisher,
    Subscriber,
    Subscription,
    report_error,
    require_not_none,
)

__all__ = ("PeekPublisher",)

T = TypeVar("T")


@final
@attrs.frozen(kw_only=True)
class PeekPublisher(Publisher[T], Generic[T]):
    """What the `Flux` ``do_on_*`` methods return."""

    source: Publisher[T]
    on_next: Callable[[T], object] | None = None
    on_error: Callable[[BaseException], object] | None = None
    on_complete: Callable[[], object] | None = None
    on_subscribe: Callable[[Subscription], object] | None = None
    on_request: Callable[[int], object] | None = None
    on_cancel: Callable[[], object] | None = None

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(_PeekSubscriber(subscriber, hooks=self))


@final
@attrs.define(eq=False)
class _PeekSubscriber(OperatorSubscriber[T, T]):
    _hooks: PeekPublisher[T] = attrs.field(kw_only=True, alias="hooks")

    def on_subscribe(self, subscription: Subscription) -> None:
        hook = self._hooks.on_subscribe
        if hook is None or self._upstream is not None:
            super().on_subscribe(subscription)
            return
        try:
            hook(subscription)
        except Exception as exc:
            subscription.cancel()
            super().on_subscribe(subscription)
            self._fail(exc)
            return
        super().on_subscribe(subscription)

    def on_next(self, item: T) -> None:
        hook = self._hooks.on_next
        if hook is not None:
            try:
                hook(item)
            except Exception as exc:
                self._fail(exc)
                return
        self._next(item)

    def on_error(self, error: BaseException) -> None:
        hook = self._hooks.on_error
        if hook is not None and not self._done:
            try:
                hook(error)
            except Exception as exc:
                exc.__context__ = error
                error = exc
        super().on_error(error)

    def on_complete(self) -> None:
        hook = self._hooks.on_complete
        if hook is not None and not self._done:
            try:
                hook()
            except Exception as exc:
                self._upstream = None
                self._finish().on_error(exc)
                return
        super().on_complete()

    def _request(self, n: int) -> None:
        hook = self._hooks.on_request
        if hook is not None:
            if self._done:
                return
            try:
                hook(n)
            except Exception as exc:
                self._fail(exc)
                return
        super()._request(n)

    def cancel(self) -> None:
        hook = self._hooks.on_cancel
        if hook is not None:
            if self._hand_over_cancel() or self._done:
                return
            try:
                hook()
            except Exception as exc:
                report_error(exc, "do_on_cancel's callback raised (rule 2.13)", self._loop)
        super().cancel()
