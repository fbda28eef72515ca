"""``pairwise``: each item paired with the one before it, ``(a, b), (b, c), …``.

Backpressure: pass-through; the first item only opens the first pair and is replaced by a
``request(1)`` upstream.
Errors: upstream errors pass through.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar, final

import attrs

from .._core import DroppingSubscriber, Publisher, Subscriber, require_not_none

__all__ = ("PairwisePublisher",)

T = TypeVar("T")

_NOTHING: Any = object()


@final
@attrs.frozen
class PairwisePublisher(Publisher[tuple[T, T]], Generic[T]):
    """What `Flux.pairwise` returns."""

    source: Publisher[T]

    def subscribe(self, subscriber: Subscriber[tuple[T, T]]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(_PairwiseSubscriber(subscriber))


@final
@attrs.define(eq=False)
class _PairwiseSubscriber(DroppingSubscriber[T, tuple[T, T]]):
    _previous: Any = attrs.field(default=_NOTHING, init=False)

    def on_next(self, item: T) -> None:
        previous = self._previous
        self._previous = item
        if previous is _NOTHING:
            self._drop()
        else:
            self._next((previous, item))
