"""``then``: wait for the source to complete, ignoring its items, then play *other*.

Reactor's ``then()``/``thenMany(other)``: without *other* the result completes empty when the
source does. *other* is subscribed only once the source completed.

Backpressure: the source is asked for everything (its items are dropped); *other* is asked for
the downstream demand outstanding when it is subscribed, then passes demand through.
Errors: an error of the source ends the stream and *other* is never subscribed; errors of
*other* pass through.
"""

from __future__ import annotations

from typing import Generic, TypeVar, final

import attrs

from .._core import ArbiterSubscriber, Publisher, Subscriber, require_not_none
from ._ignore_elements import IgnoreElementsPublisher

__all__ = ("ThenPublisher", "ThenSubscriber")

T = TypeVar("T")


@final
@attrs.frozen
class ThenPublisher(Publisher[T], Generic[T]):
    """What `Flux.then` returns when given *other*."""

    source: Publisher[object]
    other: Publisher[T]

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        ThenSubscriber(subscriber, then=self.other).begin(IgnoreElementsPublisher(self.source))


@final
@attrs.define(eq=False)
class ThenSubscriber(ArbiterSubscriber[T]):
    """Plays one publisher, then (once it completed) another, as one subscription: outstanding
    demand carries over (``then``; ``start_with`` plays its items first)."""

    _then: Publisher[T] | None = attrs.field(kw_only=True, alias="then")

    def begin(self, first: Publisher[T]) -> None:
        self.start()
        self._switch_to(first)

    def on_complete(self) -> None:
        then, self._then = self._then, None
        if then is None:
            self._finish_complete()
        else:
            self._switch_to(then)
