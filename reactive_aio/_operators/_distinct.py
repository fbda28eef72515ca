"""``distinct``: drop items whose key (the item itself by default) was seen before.

Every key seen is kept until the stream ends, so memory grows with the number of distinct keys.

Backpressure: pass-through; each dropped item is replaced by a ``request(1)`` upstream.
Errors: if *key* raises (or a key is unhashable), upstream is cancelled first, then ``on_error``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar, final

import attrs

from .._core import DroppingSubscriber, Publisher, Subscriber, require_not_none

__all__ = ("DistinctPublisher",)

T = TypeVar("T")


@final
@attrs.frozen
class DistinctPublisher(Publisher[T], Generic[T]):
    """What `Flux.distinct` returns."""

    source: Publisher[T]
    key: Callable[[T], Hashable] | None = None

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(_DistinctSubscriber(subscriber, key=self.key))


@final
@attrs.define(eq=False)
class _DistinctSubscriber(DroppingSubscriber[T, T]):
    _key: Callable[[T], Hashable] | None = attrs.field(kw_only=True, alias="key")
    _seen: set[Hashable] = attrs.field(factory=set, init=False)

    def on_next(self, item: T) -> None:
        seen = self._seen
        try:
            key = item if self._key is None else self._key(item)
            new = key not in seen
            if new:
                seen.add(key)
        except Exception as exc:
            self._fail(exc)
            return
        if new:
            self._next(item)
        else:
            self._drop()

    def _finish(self) -> Subscriber[T]:
        downstream = super()._finish()
        self._seen = set()  # let the keys go as soon as the stream ends
        return downstream
