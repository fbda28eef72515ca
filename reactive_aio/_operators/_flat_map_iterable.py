"""``flat_map_iterable``: each item becomes an iterable whose elements are emitted in order.

Backpressure: full. Upstream items are prefetched (`PREFETCH`, replenished in halves) and
their iterables are pulled only as downstream demand allows, from the drain; nothing is
materialised ahead beyond one element at the very end (to complete without extra demand).
Errors: if *fn* or an iterator raises, or an element is ``None``, upstream is cancelled first,
then ``on_error``; upstream errors are signalled at once, dropping what was prefetched.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Generic, TypeVar, final

import attrs

from .._core import (
    DrainSubscription,
    NullSignalError,
    Publisher,
    Replenisher,
    Subscriber,
    Subscription,
    require_not_none,
)

__all__ = ("PREFETCH", "FlatMapIterablePublisher")

T = TypeVar("T")
R = TypeVar("R")

PREFETCH = 32
"""Upstream items requested ahead."""

_NOTHING: Any = object()


@final
@attrs.frozen
class FlatMapIterablePublisher(Publisher[R], Generic[T, R]):
    """What `Flux.flat_map_iterable` returns."""

    source: Publisher[T]
    fn: Callable[[T], Iterable[R]]

    def subscribe(self, subscriber: Subscriber[R]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(_FlatMapIterable(subscriber, fn=self.fn))


@final
@attrs.define(eq=False)
class _FlatMapIterable(DrainSubscription[R], Subscriber[T], Generic[T, R]):
    """Upstream's subscriber and downstream's subscription at once."""

    _fn: Callable[[T], Iterable[R]] = attrs.field(kw_only=True, alias="fn")
    _replenisher: Replenisher = attrs.field(
        factory=lambda: Replenisher(PREFETCH, PREFETCH // 2), init=False
    )
    _queue: deque[T] = attrs.field(factory=deque, init=False)
    _iterator: Iterator[R] | None = attrs.field(default=None, init=False)
    _ahead: Any = attrs.field(default=_NOTHING, init=False)
    _upstream_done: bool = attrs.field(default=False, init=False)
    _upstream_error: BaseException | None = attrs.field(default=None, init=False)

    # -- upstream ----------------------------------------------------------------------

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "2.13", "on_subscribe's subscription")
        if self._replenisher.upstream is not None or self._downstream is None:
            subscription.cancel()  # rule 2.5
            return
        self._replenisher.upstream = subscription  # kept from here on: start() may cancel it
        self.start()
        if not self.done:
            subscription.request(PREFETCH)

    def on_next(self, item: T) -> None:
        if not self.done:
            self._queue.append(item)
            self.signal()

    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        self._replenisher.upstream = None
        self._upstream_error = error
        self._drain()

    def on_complete(self) -> None:
        self._replenisher.upstream = None
        self._upstream_done = True
        self._drain()

    # -- the drain ---------------------------------------------------------------------

    def _emit(self, limit: int) -> int:
        error = self._upstream_error
        if error is not None:
            self._error(error)
            return 0
        downstream = self._downstream
        assert downstream is not None
        on_next = downstream.on_next
        emitted = 0
        try:
            while emitted < limit:
                value = self._ahead
                if value is _NOTHING:
                    value = self._advance()
                    if value is _NOTHING:
                        break
                else:
                    self._ahead = _NOTHING
                emitted += 1
                on_next(value)
                if self._done:
                    return emitted
            if self._upstream_done and self._ahead is _NOTHING and not self._queue:
                # Look one element ahead so the end is signalled without further demand.
                self._ahead = self._advance()
                if self._ahead is _NOTHING:
                    self._complete()
        except _UserError as failure:
            self._error(failure.error)
        return emitted

    def _advance(self) -> Any:
        """The next element, pulling new upstream items as iterables run out; may raise."""
        while True:
            iterator = self._iterator
            if iterator is not None:
                try:
                    value = next(iterator, _NOTHING)
                except Exception as exc:
                    raise _UserError(exc) from None
                if value is not _NOTHING:
                    if value is None:
                        raise _UserError(
                            NullSignalError("rule 2.13: flat_map_iterable's iterable yielded None")
                        )
                    return value
                self._iterator = None
            queue = self._queue
            if not queue:
                return _NOTHING
            item = queue.popleft()
            # may deliver items on this stack: they queue behind and signal another pass
            self._replenisher.consumed(1)
            try:
                self._iterator = iter(self._fn(item))
            except Exception as exc:
                raise _UserError(exc) from None

    def _release(self) -> None:
        self._replenisher.cancel()
        self._queue.clear()
        self._iterator = None
        self._ahead = _NOTHING


class _UserError(Exception):
    """Carries an exception of the user's function or iterator out of the emit loop."""

    def __init__(self, error: Exception) -> None:
        super().__init__(error)
        self.error = error
