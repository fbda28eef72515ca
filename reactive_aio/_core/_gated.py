"""`GatedSubscriber`: the base of operators gated by another publisher's first item.

``take_until`` and ``skip_until`` both react to the first item of another publisher. The other
publisher is subscribed (and asked for one item) when the source's subscription arrives, before
downstream gets ``on_subscribe``, so it can act before any demand arrives (items requested
from inside ``on_subscribe`` could otherwise all pass unchecked). Its error ends the stream;
ending the stream in any way cancels it.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar, final

import attrs

from ._attach import attach
from ._checks import require_not_none
from ._dropping import DroppingSubscriber
from ._spec import Publisher, Subscriber, Subscription

__all__ = ("GatedSubscriber",)

T = TypeVar("T")


@attrs.define(eq=False)
class GatedSubscriber(DroppingSubscriber[T, T], Generic[T]):
    """Subclasses say what the other publisher's first item does (`other_emitted`)."""

    _other: Publisher[object] | None = attrs.field(kw_only=True, alias="other")
    _watched: Subscription | None = attrs.field(default=None, init=False)
    _early_error: BaseException | None = attrs.field(default=None, init=False)
    """The other publisher failed before downstream got ``on_subscribe``."""
    _completed_early: bool = attrs.field(default=False, init=False)
    """`_complete_early` was called before downstream got ``on_subscribe``."""

    def other_emitted(self) -> None:
        """The other publisher emitted its first item (it is no longer watched)."""
        raise NotImplementedError

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "2.13", "on_subscribe's subscription")
        other, self._other = self._other, None
        if self._upstream is not None or other is None:
            subscription.cancel()  # rule 2.5
            return
        other.subscribe(_FirstSignalSubscriber(self))
        if self._completed_early:
            subscription.cancel()
            downstream = self._finish()
            if attach(downstream, self):  # else refused: subscribed twice (rules 1.10, 2.12)
                downstream.on_subscribe(self)  # what it requests goes nowhere: no upstream
                downstream.on_complete()
            return
        super().on_subscribe(subscription)
        error, self._early_error = self._early_error, None
        if error is not None:
            self._fail(error)

    def on_error(self, error: BaseException) -> None:
        self._stop_watching()
        super().on_error(error)

    def on_complete(self) -> None:
        self._stop_watching()
        super().on_complete()

    def cancel(self) -> None:
        if self._hand_over_cancel():
            return
        self._stop_watching()
        super().cancel()

    def _complete_early(self) -> None:
        if self._upstream is None:
            self._completed_early = True
        else:
            super()._complete_early()

    def _watch(self, subscription: Subscription) -> bool:
        if self._done or self._watched is not None:
            return False
        self._watched = subscription
        return True

    def _other_signalled(self, error: BaseException | None) -> None:
        if error is None:
            self._stop_watching()
            self.other_emitted()
        elif self._upstream is None:
            self._early_error = error
        else:
            self._watched = None
            self._fail(error)

    def _stop_watching(self) -> None:
        watched, self._watched = self._watched, None
        if watched is not None:
            watched.cancel()


@final
@attrs.define(eq=False)
class _FirstSignalSubscriber(Subscriber[object]):
    """Subscribes to the other publisher on behalf of *owner*; forgets it after one signal."""

    _owner: GatedSubscriber[Any] | None

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "2.13", "on_subscribe's subscription")
        owner = self._owner
        if owner is None or not owner._watch(subscription):
            subscription.cancel()
            return
        subscription.request(1)

    def on_next(self, item: object) -> None:
        owner, self._owner = self._owner, None
        if owner is not None:
            owner._other_signalled(None)

    def on_error(self, error: BaseException) -> None:
        owner, self._owner = self._owner, None
        if owner is not None:
            owner._other_signalled(error)

    def on_complete(self) -> None:
        self._owner = None
