"""``Flux.from_iterable`` and ``Flux.just``: the items of a synchronous iterable.

Backpressure: full; ``next()`` is called only for requested items, from the drain.
Errors: an exception from the iterator ends the stream with ``on_error``; a ``None`` item ends
it with ``on_error(NullSignalError)`` naming its position (rule 2.13), after the items before it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Generic, TypeVar, final

import attrs

from .._core import DrainSubscription, NullSignalError, Publisher, Subscriber, require_not_none

__all__ = ("IterablePublisher",)

T = TypeVar("T")


@final
@attrs.frozen
class IterablePublisher(Publisher[T], Generic[T]):
    """Cold when the iterable can be iterated again (a list); a one-shot iterator serves once."""

    iterable: Iterable[T]

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        iterable = self.iterable
        length = len(iterable) if isinstance(iterable, (list, tuple, range, str, bytes)) else -1
        subscription = _IterableSubscription[T](subscriber, length=length)
        try:
            subscription.iterator = iter(iterable)
        except Exception as exc:
            subscription.fault = exc
        subscription.start()


@final
@attrs.define(eq=False)
class _IterableSubscription(DrainSubscription[T]):
    iterator: Iterator[T] | None = attrs.field(default=None, kw_only=True)
    fault: Exception | None = attrs.field(default=None, kw_only=True)
    length: int = attrs.field(default=-1, kw_only=True)
    _position: int = attrs.field(default=0, init=False)

    def _emit(self, limit: int) -> int:
        iterator = self.iterator
        if iterator is None:
            self._error(self.fault or RuntimeError("iterable unavailable"))
            return 0
        downstream = self._downstream
        assert downstream is not None
        on_next = downstream.on_next
        emitted = 0
        while emitted < limit:
            try:
                item = next(iterator)
            except StopIteration:
                self._complete()
                return emitted
            except Exception as exc:
                self._error(exc)
                return emitted
            if item is None:
                self._error(
                    NullSignalError(
                        f"rule 2.13: item #{self._position + emitted} of the iterable is None"
                    )
                )
                return emitted
            emitted += 1
            on_next(item)
            if self._done:
                break
        self._position += emitted
        if self._position == self.length:  # a sized collection completes with its last item
            self._complete()
        return emitted

    def _release(self) -> None:
        self.iterator = None
