"""``Flux.from_iterable`` and ``Flux.just``: the items of a synchronous iterable.

Backpressure: full; ``next()`` is called only for requested items, from the drain.
Errors: an exception from the iterator ends the stream with ``on_error``; a ``None`` item ends
it with ``on_error(NullSignalError)`` naming its position (rule 2.13), after the items before it.
Fusion: a fused chain of maps and filters behind it runs inside the emit loop, and an item a
filter drops is not counted against demand (see `FusedPublisher`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Generic, TypeVar, final

import attrs

from .._core import DrainSubscription, NullSignalError, Publisher, Subscriber, require_not_none

__all__ = ("IterablePublisher", "IteratorSubscription")

T = TypeVar("T")


@final
@attrs.frozen
class IterablePublisher(Publisher[T], Generic[T]):
    """Cold when the iterable can be iterated again (a list); a one-shot iterator serves once."""

    iterable: Iterable[T]

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.subscribe_fused(subscriber, None)

    def subscribe_fused(
        self, subscriber: Subscriber[T], try_next: Callable[[T], bool] | None
    ) -> None:
        """Subscribe a fused chain's subscriber: items go to *try_next*, and one it returns
        False for (dropped) does not count against demand."""
        iterable = self.iterable
        length = len(iterable) if isinstance(iterable, (list, tuple, range, str, bytes)) else -1
        subscription = IteratorSubscription[T](subscriber, length=length, try_next=try_next)
        try:
            subscription.iterator = iter(iterable)
        except Exception as exc:
            subscription.fault = exc
        subscription.start()


@final
@attrs.define(eq=False)
class IteratorSubscription(DrainSubscription[T]):
    """Emits an iterator's items; a sized one (*length* >= 0) completes with its last item."""

    iterator: Iterator[T] | None = attrs.field(default=None, kw_only=True)
    fault: Exception | None = attrs.field(default=None, kw_only=True)
    length: int = attrs.field(default=-1, kw_only=True)
    try_next: Callable[[T], bool] | None = attrs.field(default=None, kw_only=True)
    """A fused chain's entry: False for an item it dropped."""
    _pulled: int = attrs.field(default=0, init=False)

    def _emit(self, limit: int) -> int:
        iterator = self.iterator
        if iterator is None:
            self._error(self.fault or RuntimeError("iterable unavailable"))
            return 0
        pulled = self._pulled
        emitted = 0
        if limit > 0:
            downstream = self._downstream
            assert downstream is not None
            emit: Callable[[T], object] = self.try_next or downstream.on_next
            raised: Exception | None = None
            try:
                for item in iterator:
                    if item is None:
                        self._pulled = pulled
                        self._error(
                            NullSignalError(f"rule 2.13: item #{pulled} of the iterable is None")
                        )
                        return emitted
                    pulled += 1
                    try:
                        kept = emit(item)
                    except Exception as exc:  # the subscriber's: the drain reports it (2.13)
                        raised = exc
                        break
                    if kept is not False:
                        emitted += 1
                        if emitted == limit:
                            break
                    if self._done:  # on_next cancelled, or a fused stage failed
                        break
                else:
                    self._complete()
                    return emitted
            except Exception as exc:  # the iterator's own failure
                self._error(exc)
                return emitted
            self._pulled = pulled
            if raised is not None:
                raise raised
        if pulled == self.length:  # a sized collection completes with its last item
            self._complete()
        return emitted

    def _release(self) -> None:
        self.iterator = None
