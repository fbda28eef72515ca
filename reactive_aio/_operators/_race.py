"""``Flux.race``: mirror whichever source signals first; cancel the others.

The first source to signal anything (an item, an error or completion) wins; ``on_subscribe``
alone does not count.

Backpressure: every source prefetches *prefetch* items into a bounded queue until one wins;
then the winner's queue is drained within downstream demand and re-requested in batches.
Errors: the winner's error ends the stream; an error that wins the race cancels the others,
then ``on_error``. Racing no sources completes at once. Cancelling cancels every source.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar, final

import attrs

from .._core import (
    Publisher,
    QueueDrain,
    QueueSubscriber,
    Subscriber,
    require_not_none,
    require_publisher,
)
from ._flat_map import DEFAULT_PREFETCH, check_sizes

__all__ = ("RacePublisher",)

T = TypeVar("T")


@final
@attrs.frozen
class RacePublisher(Publisher[T], Generic[T]):
    """What `Flux.race` returns."""

    sources: tuple[Publisher[T], ...]
    prefetch: int = DEFAULT_PREFETCH

    def __attrs_post_init__(self) -> None:
        for source in self.sources:
            require_publisher(source, "race")
        check_sizes(1, self.prefetch)

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        main = _RaceMain[T](subscriber)
        main.subscribe_all(self.sources, self.prefetch)  # stops once a source has won


@final
@attrs.define(eq=False)
class _RaceMain(QueueDrain[T], Generic[T]):
    winner: QueueSubscriber[T] | None = attrs.field(default=None, init=False)

    def _wins(self, inner: QueueSubscriber[Any]) -> bool:
        """True when *inner* is (now) the winner; the first caller cancels the rest."""
        winner = self.winner
        if winner is None:
            self.winner = inner
            for other in self.inners:
                if other is not inner:
                    other.cancel()
            self.inners = [inner]
            return True
        return winner is inner

    def inner_next(self, inner: QueueSubscriber[Any]) -> None:
        if not self._wins(inner):
            return
        if self._emit_now(inner.queue):
            inner.consumed(1)
        else:
            self._drain()

    def inner_complete(self, inner: QueueSubscriber[Any]) -> None:
        if self._wins(inner):
            self.signal()

    def inner_error(self, inner: QueueSubscriber[Any], error: BaseException) -> None:
        if self._wins(inner):
            self._fail(error)

    def _emit(self, limit: int) -> int:
        winner = self.winner
        if winner is None:
            if not self.inners:
                self._complete()
            return 0
        queue = winner.queue
        emitted = self._emit_from(queue, limit)
        if self._done:
            return emitted
        winner.consumed(emitted)
        if not queue and winner.done:
            self._complete()
        return emitted

    def _release(self) -> None:
        inners, self.inners = self.inners, []
        for inner in inners:
            inner.cancel()
