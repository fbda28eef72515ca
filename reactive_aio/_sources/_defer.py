"""``Flux.defer``: build a fresh publisher for every subscriber.

Backpressure: that of the publisher the factory returns.
Errors: if the factory raises or returns ``None``, the subscriber gets ``on_subscribe`` then
``on_error`` (rule 1.9: ``subscribe`` itself returns normally).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar, final

import attrs

from .._core import NullSignalError, Publisher, Subscriber, adopt, require_not_none, short_repr
from ._error import ErrorPublisher

__all__ = ("DeferPublisher",)

T = TypeVar("T")


@final
@attrs.frozen
class DeferPublisher(Publisher[T], Generic[T]):
    """Calls *factory* on each ``subscribe``."""

    factory: Callable[[], Publisher[T]]

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        try:
            publisher: object = self.factory()
        except Exception as exc:
            ErrorPublisher(exc).subscribe(subscriber)
            return
        if not isinstance(publisher, Publisher):
            error = NullSignalError(
                f"defer's factory returned {short_repr(publisher)}, not a Publisher"
            )
            ErrorPublisher(error).subscribe(subscriber)
            return
        adopt(publisher).subscribe(subscriber)
