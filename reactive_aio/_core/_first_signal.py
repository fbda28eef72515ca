"""`FirstSignalSubscriber`: watches a second publisher for its first item, for an operator.

``take_until`` and ``skip_until`` both react to the first item of another publisher: they
subscribe to it with this subscriber, which requests one item, hands the subscription to its
owner (so the owner can cancel it), and reports the first item or an error back. It is a helper
of operators, not an operator of its own.
"""

from __future__ import annotations

from typing import Protocol, final

import attrs

from ._checks import require_not_none
from ._spec import Subscriber, Subscription

__all__ = ("FirstSignalSubscriber", "SignalOwner", "stop_watching")


class SignalOwner(Protocol):
    """The operator subscriber that watches another publisher."""

    watched: Subscription | None
    """The other publisher's subscription while it is watched."""

    @property
    def done(self) -> bool:
        """True once the operator finished; a late subscription is then cancelled at once."""
        ...

    def other_emitted(self) -> None:
        """The other publisher emitted its first item."""
        ...

    def other_failed(self, error: BaseException) -> None:
        """The other publisher failed before emitting."""
        ...


def stop_watching(owner: SignalOwner) -> None:
    """Cancel the other publisher's subscription, if any."""
    watched, owner.watched = owner.watched, None
    if watched is not None:
        watched.cancel()


@final
@attrs.define(eq=False)
class FirstSignalSubscriber(Subscriber[object]):
    """Subscribes to the other publisher on behalf of *owner*; forgets it after one signal."""

    _owner: SignalOwner | None

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "2.13", "on_subscribe's subscription")
        owner = self._owner
        if owner is None or owner.done or owner.watched is not None:
            subscription.cancel()
            return
        owner.watched = subscription
        subscription.request(1)

    def on_next(self, item: object) -> None:
        owner, self._owner = self._owner, None
        if owner is not None:
            owner.other_emitted()

    def on_error(self, error: BaseException) -> None:
        owner, self._owner = self._owner, None
        if owner is not None:
            owner.other_failed(error)

    def on_complete(self) -> None:
        self._owner = None
