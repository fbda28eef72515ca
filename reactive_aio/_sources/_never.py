"""``Flux.never``: never signals anything after ``on_subscribe``.

Backpressure: demand is accepted and never used.
Errors: none; only ``request(n <= 0)`` is signalled (rule 3.9).
"""

from __future__ import annotations

from typing import Never, final

import attrs

from .._core import DrainSubscription, Publisher, Subscriber, require_not_none

__all__ = ("NeverPublisher",)


@final
@attrs.frozen
class NeverPublisher(Publisher[Never]):
    """A stream that stays open until cancelled."""

    def subscribe(self, subscriber: Subscriber[Never]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        _NeverSubscription(subscriber).start()


@final
@attrs.define(eq=False)
class _NeverSubscription(DrainSubscription[Never]):
    def _emit(self, limit: int) -> int:
        return 0
