"""``flat_map_iterable``: each item becomes an iterable whose elements are emitted in order.

Backpressure: full. Upstream items are prefetched (`PREFETCH`, replenished by three quarters) and
their iterables are pulled only as downstream demand allows, by a `SyncInner`'s ``pull`` (as
``flat_map`` pulls a synchronous inner); nothing is materialised ahead beyond one element at
the very end (to complete without extra demand).
Errors: if *fn* or an iterator raises, or an element is ``None`` (rule 2.13, named by its
position in its iterable), upstream is cancelled first, then ``on_error``; upstream errors are
signalled at once, dropping what was prefetched.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar, final

import attrs

from .._core import (
    DrainSubscription,
    Publisher,
    Replenisher,
    Subscriber,
    Subscription,
    SyncInner,
    require_not_none,
)

__all__ = ("PREFETCH", "FlatMapIterablePublisher")

T = TypeVar("T")
R = TypeVar("R")

PREFETCH = 32
"""Upstream items requested ahead."""


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
    _replenisher: Replenisher = attrs.field(factory=lambda: Replenisher(PREFETCH), init=False)
    _queue: deque[T] = attrs.field(factory=deque, init=False)
    _inner: SyncInner[R] | None = attrs.field(default=None, init=False)
    """The iterable being emitted, pulled as its items go out."""
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

    def inner_error(self, inner: SyncInner[R], error: BaseException) -> None:
        """The iterator raised or yielded None: upstream is cancelled, then ``on_error``."""
        self._error(error)

    # -- the drain ---------------------------------------------------------------------

    def _emit(self, limit: int) -> int:
        error = self._upstream_error
        if error is not None:
            self._error(error)
            return 0
        inner = self._inner
        emitted = 0
        while emitted < limit:
            if inner is None or inner.done:  # the next upstream item's iterable
                inner = self._next_inner()
                if inner is None:
                    break
            emitted += inner.pull(self, limit - emitted)
            if self._done:
                return emitted
        if self._upstream_done and not self._queue and not self._done:
            if inner is not None:  # look one element ahead: the end is signalled without demand
                inner.look_ahead()  # a failure here ended the stream: completing does nothing
            if inner is None or inner.done:
                self._complete()
        return emitted

    def _next_inner(self) -> SyncInner[R] | None:
        """Start on the next upstream item's iterable; None when none is queued or *fn* or
        ``iter()`` failed (the stream failed then)."""
        queue = self._queue
        if not queue:
            return None
        item = queue.popleft()
        # may deliver items on this stack: they queue behind and signal another pass
        self._replenisher.consumed(1)
        try:
            iterator = iter(self._fn(item))
        except Exception as exc:  # user code fails the stream, never the caller
            self._error(exc)
            return None
        inner = self._inner = SyncInner(self, iterator, ahead=False)
        return inner

    def _release(self) -> None:
        self._replenisher.cancel()
        self._queue.clear()
        inner, self._inner = self._inner, None
        if inner is not None:
            inner.cancel()
