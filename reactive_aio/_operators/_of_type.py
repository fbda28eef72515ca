"""``of_type``: keep only items that are instances of a class (Reactor's ``ofType``).

Backpressure: pass-through; each dropped item is replaced by a ``request(1)`` upstream.
Errors: upstream errors pass through.
"""

from __future__ import annotations

from typing import Generic, TypeVar, final

import attrs

from .._core import DroppingSubscriber, Publisher, Subscriber, require_not_none

__all__ = ("OfTypePublisher",)

R = TypeVar("R")


@final
@attrs.frozen
class OfTypePublisher(Publisher[R], Generic[R]):
    """What `Flux.of_type` returns."""

    source: Publisher[object]
    cls: type[R] | tuple[type[R], ...]

    def subscribe(self, subscriber: Subscriber[R]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(_OfTypeSubscriber(subscriber, cls=self.cls))


@final
@attrs.define(eq=False)
class _OfTypeSubscriber(DroppingSubscriber[object, R]):
    _cls: type[R] | tuple[type[R], ...] = attrs.field(kw_only=True, alias="cls")

    def on_next(self, item: object) -> None:
        if isinstance(item, self._cls):
            self._next(item)
        else:
            self._drop()
