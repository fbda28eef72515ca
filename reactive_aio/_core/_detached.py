"""`DETACHED`: the subscriber a finished stage forwards to instead of its real downstream.

A stage that was cancelled or terminated swaps its downstream for this one, so items still in
flight go nowhere (rule 2.8) and the stage no longer references the real subscriber, which a
caller may keep holding the subscription of (rule 3.13).
"""

from __future__ import annotations

from typing import Any, final

from ._spec import Subscriber, Subscription

__all__ = ("DETACHED",)


@final
class _Detached(Subscriber[Any]):
    __slots__ = ()

    def on_subscribe(self, subscription: Subscription) -> None:
        subscription.cancel()  # nobody is listening

    def on_next(self, item: object) -> None:
        pass

    def on_error(self, error: BaseException) -> None:
        pass

    def on_complete(self) -> None:
        pass

    def __repr__(self) -> str:
        return "DETACHED"


DETACHED: Subscriber[Any] = _Detached()
"""Ignores every signal; cancels any subscription it is offered."""
