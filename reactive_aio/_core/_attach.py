"""Rules 1.10 and 2.12 for every publisher of the library: a subscriber is subscribed once.

A publisher cannot tell from ``subscribe(s)`` alone that *s* is already subscribed somewhere
else, so every subscription the library hands to a subscriber goes through `attach` just
before ``on_subscribe``, which remembers which subscription serves which subscriber. When a
live subscription of the library already serves it, the subscriber was subscribed twice: the
earlier subscription is cancelled and the subscriber gets ``on_subscribe`` (with a
subscription that does nothing) and then ``on_error(ProtocolViolationError)`` naming the rules,
so the mistake ends the stream visibly, nothing follows the error, and no orphaned
subscription holds up a shared source.

"Live" means the subscription still holds the subscriber and is not done: a subscriber may be
subscribed again once its subscription ended (``retry`` and ``concat`` resubscribe their own
subscriber). The record is weak: it keeps neither the subscription nor the subscriber alive,
and a recorded subscription only counts while it still references that very subscriber, so a
reused ``id`` can never be mistaken for it.

`refuse` is the one way the library turns a subscriber away: a single-subscriber publisher
(a ``window``, a group) refuses a second subscriber with it too.
"""

from __future__ import annotations

import weakref
from typing import Any, Protocol, final

from ._exceptions import ProtocolViolationError
from ._report import report_error
from ._spec import Subscriber, Subscription

__all__ = ("Serving", "attach", "refuse")


class Serving(Protocol):
    """What `attach` needs of a subscription: whom it serves, whether it is done, cancel."""

    @property
    def _downstream(self) -> object: ...

    @property
    def _done(self) -> bool: ...

    def cancel(self) -> None: ...


_serving: weakref.WeakValueDictionary[int, Serving] = weakref.WeakValueDictionary()
"""``id(subscriber)`` → the library subscription that serves it now."""


def attach(subscriber: Subscriber[Any], subscription: Serving) -> bool:
    """Record that *subscription* serves *subscriber*, before its ``on_subscribe``.

    Returns False when a live subscription of the library already serves *subscriber*: that
    one is cancelled and *subscriber* refused (see the module docstring); the caller then
    releases *subscription* without signalling anything.
    """
    key = id(subscriber)
    earlier = _serving.get(key)
    if (
        earlier is not None
        and earlier is not subscription
        and earlier._downstream is subscriber
        and not earlier._done
    ):
        earlier.cancel()
        refuse(
            subscriber,
            ProtocolViolationError(
                f"rules 1.10 and 2.12: this {type(subscriber).__name__} is already subscribed;"
                " a subscriber takes one subscription at a time, so both end here"
            ),
        )
        return False
    _serving[key] = subscription
    return True


def refuse(subscriber: Subscriber[Any], error: BaseException) -> None:
    """Turn *subscriber* away: ``on_subscribe`` with a subscription that does nothing, then
    ``on_error(error)``; a subscriber that raises is reported (rule 2.13)."""
    try:
        subscriber.on_subscribe(_REFUSED)
        subscriber.on_error(error)
    except Exception as exc:
        report_error(exc, f"{type(subscriber).__name__} raised while being refused (rule 2.13)")


@final
class _Refused(Subscription):
    """The subscription of a refused subscriber: already over, so requests and cancel do nothing
    (rules 3.6, 3.7)."""

    __slots__ = ()

    def request(self, n: int) -> None:
        pass

    def cancel(self) -> None:
        pass


_REFUSED = _Refused()
