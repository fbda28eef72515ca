"""``Flux.error``: fails at once.

Backpressure: none needed; ``on_error`` follows ``on_subscribe`` without demand (rule 2.10).
Errors: signals the given exception to every subscriber.
"""

from __future__ import annotations

from typing import Never, final

import attrs

from .._core import DrainSubscription, Publisher, Subscriber, require_not_none

__all__ = ("ErrorPublisher",)


@final
@attrs.frozen
class ErrorPublisher(Publisher[Never]):
    """A stream that fails with *error* after ``on_subscribe``."""

    error: BaseException

    def subscribe(self, subscriber: Subscriber[Never]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        _ErrorSubscription(subscriber, error=self.error).start()


@final
@attrs.define(eq=False)
class _ErrorSubscription(DrainSubscription[Never]):
    _failure: BaseException = attrs.field(kw_only=True, alias="error")

    def _emit(self, limit: int) -> int:
        self._error(self._failure)
        return 0
