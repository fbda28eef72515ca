"""``Flux.from_iterable`` and ``Flux.just``: the items of a synchronous iterable.

Backpressure: full; ``next()`` is called only for requested items, from the drain.
Errors: an exception from the iterator ends the stream with ``on_error``; a ``None`` item ends
it with ``on_error(NullSignalError)`` naming its position (rule 2.13), after the items before it.
Fusion: a fused chain of maps and filters behind it runs inside the emit loop, and an item a
filter drops is not counted against demand (see `FusedPublisher`), only toward the drain's
yield to the loop. As a `SyncSource` it hands over ``iter(iterable)`` (a ``flat_map`` pulls
it in its own drain), and a list as itself (``sync_list``), which a `PulledSubscription`
takes a slice at a time.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Generic, TypeVar, final

import attrs

from .._core import (
    FusableSource,
    FusedSubscriber,
    IteratorSubscription,
    Subscriber,
    exact_length,
    read_once_error,
    require_not_none,
)

__all__ = ("IterablePublisher",)

T = TypeVar("T")


@final
@attrs.define(eq=False)
class IterablePublisher(FusableSource[T], Generic[T]):
    """Cold when the iterable can be iterated again (a list); a one-shot iterator (a
    generator, anything whose ``iter()`` is itself) serves its first subscriber, and every
    later one gets ``on_error`` saying so."""

    iterable: Iterable[T]
    _read: bool = attrs.field(default=False, init=False)
    """A one-shot iterator was handed out."""

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self._start(subscriber, None)

    def subscribe_fused(self, chain: FusedSubscriber) -> None:
        self._start(chain, chain)

    def sync_iterator(self) -> Iterator[T] | None:
        try:
            return self._iterator()
        except Exception:  # a subscriber gets the error
            return None

    def sync_list(self) -> list[T] | None:
        iterable = self.iterable
        return iterable if type(iterable) is list else None

    def sync_range(self) -> range | None:
        iterable = self.iterable
        return iterable if type(iterable) is range else None

    def _iterator(self) -> Iterator[T]:
        if self._read:
            raise read_once_error("Flux.from_iterable", "__iter__", self.iterable)
        iterator = iter(self.iterable)
        self._read = iterator is self.iterable  # one-shot: whoever comes next gets an error
        return iterator

    def _start(self, subscriber: Subscriber[T], chain: FusedSubscriber | None) -> None:
        iterator: Iterator[T] | None = None
        fault = None
        try:
            iterator = self._iterator()
        except Exception as exc:
            fault = exc
        length = -1 if iterator is None else exact_length(iterator)
        IteratorSubscription[T](
            subscriber, iterator=iterator, fault=fault, length=length, chain=chain
        ).start()
