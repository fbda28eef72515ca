"""``dematerialize``: `Notification` items back into signals (the reverse of ``materialize``).

A ``"next"`` notification emits its value; ``"complete"`` completes and ``"error"`` fails the
stream with its error, cancelling upstream either way. The source's own completion passes
through.

Backpressure: pass-through.
Errors: an ``"error"`` notification's error, and upstream errors, end the stream.
"""

from __future__ import annotations

from typing import Generic, TypeVar, final

import attrs

from .._core import OperatorSubscriber, Publisher, Subscriber, require_not_none
from ._materialize import Notification

__all__ = ("DematerializePublisher",)

T = TypeVar("T")


@final
@attrs.frozen
class DematerializePublisher(Publisher[T], Generic[T]):
    """What `Flux.dematerialize` returns."""

    source: Publisher[Notification[T]]

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(_DematerializeSubscriber(subscriber))


@final
@attrs.define(eq=False)
class _DematerializeSubscriber(OperatorSubscriber[Notification[T], T]):
    def on_next(self, item: Notification[T]) -> None:
        kind = item.kind
        if kind == "next":
            self._next(item.value)
        elif kind == "complete":
            self._complete_early()
        else:
            assert item.error is not None  # a Notification checks it
            self._fail(item.error)
