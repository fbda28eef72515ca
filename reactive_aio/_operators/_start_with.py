"""``start_with``: the given items first, then the items of the source.

The source is subscribed only once the given items were delivered.

Backpressure: full; the items are emitted as requested, and the demand left over goes to the
source when it is subscribed.
Errors: errors of the source pass through.
"""

from __future__ import annotations

from typing import Generic, TypeVar, final

import attrs

from .._core import Publisher, Subscriber, require_not_none
from .._sources._from_iterable import IterablePublisher
from ._then import ThenSubscriber

__all__ = ("StartWithPublisher",)

T = TypeVar("T")


@final
@attrs.frozen
class StartWithPublisher(Publisher[T], Generic[T]):
    """What `Flux.start_with` returns."""

    source: Publisher[T]
    items: tuple[T, ...]

    def __attrs_post_init__(self) -> None:
        for position, item in enumerate(self.items):
            require_not_none(item, "2.13", f"start_with's item #{position}")

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        ThenSubscriber(subscriber, then=self.source).begin(IterablePublisher(self.items))
