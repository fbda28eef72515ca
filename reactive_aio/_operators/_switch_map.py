"""``switch_map`` and ``switch_on_next``: map every item to an inner stream (for
``switch_on_next`` each item is one); a new item cancels the previous inner.

Only the inner stream of the latest outer item emits. What the function returns may be a
publisher, an async iterable or an awaitable (see ``_as_publisher``); one whose items are at
hand (a `SyncSource`: ``range``, ``from_iterable``, ``just``, maps and filters over those) is
pulled in the drain instead of subscribed, as in ``flat_map``.

Backpressure: unbounded-in for the outer source (an outer item only switches, it is never
emitted); the current inner stream prefetches *prefetch* items into a bounded queue,
re-requested in batches (a synchronous one is pulled only as items are emitted). Downstream
demand is honoured exactly; items queued from a replaced inner stream are dropped.
Errors: an error of the outer source or of the current inner stream, or a raising function,
cancels both, then ``on_error`` once. Completion comes once the outer source and the last
inner stream completed.
Loop: none of its own; inner async iterables and awaitables run on the running loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, final

import attrs

from .._core import (
    MAX_DEMAND,
    OuterDrain,
    Publisher,
    QueueSubscriber,
    Subscriber,
    Subscription,
    SyncInner,
    require_not_none,
)
from ._as_publisher import as_inner
from ._flat_map import DEFAULT_PREFETCH, check_sizes

__all__ = ("SwitchMapPublisher",)

T = TypeVar("T")
R = TypeVar("R")


@final
@attrs.frozen
class SwitchMapPublisher(Publisher[R], Generic[T, R]):
    """What `Flux.switch_map` returns."""

    source: Publisher[T]
    fn: Callable[[T], object]
    prefetch: int = DEFAULT_PREFETCH

    def __attrs_post_init__(self) -> None:
        check_sizes(1, self.prefetch)

    def subscribe(self, subscriber: Subscriber[R]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(_SwitchMapMain[T, R](subscriber, fn=self.fn, prefetch=self.prefetch))


@final
@attrs.define(eq=False)
class _SwitchMapMain(OuterDrain[T, R], Generic[T, R]):
    _fn: Callable[[T], object] = attrs.field(kw_only=True, alias="fn")
    _prefetch: int = attrs.field(kw_only=True, alias="prefetch")
    _inner: QueueSubscriber[R] | SyncInner[R] | None = attrs.field(default=None, init=False)

    def _outer_started(self, subscription: Subscription) -> None:
        subscription.request(MAX_DEMAND)

    def on_next(self, item: T) -> None:
        if self._done:
            return
        previous = self._inner
        if previous is not None:
            self._inner = None
            previous.cancel()
        try:
            sync, publisher = as_inner(self._fn(item), "switch_map", self)
        except Exception as exc:  # user code fails the stream, never the caller
            self._fail(exc)
            return
        if publisher is None:  # items at hand: pulled in the drain, nothing subscribed
            assert sync is not None
            self._inner = sync
            self.signal()
            return
        inner = QueueSubscriber[R](self, self._prefetch)
        self._inner = inner
        publisher.subscribe(inner)

    def inner_next(self, inner: QueueSubscriber[Any]) -> None:
        if inner is self._inner and self._emit_now(inner.queue):
            inner.consumed(1)
        else:
            self._drain()

    def _emit(self, limit: int) -> int:
        inner = self._inner
        emitted = 0
        if inner is not None:
            if type(inner) is SyncInner:
                emitted = inner.pull(self, limit)
                if self._done or inner is not self._inner:
                    return emitted  # cancelled, or on_next caused a switch
                if not inner.done:
                    return emitted
            else:
                queue = inner.queue
                emitted = self._emit_from(queue, limit)
                if self._done or inner is not self._inner:
                    return emitted
                inner.consumed(emitted)
                if queue or not inner.done:
                    return emitted
            self._inner = None
        if self._outer_done:
            self._complete()
        return emitted

    def _release(self) -> None:
        upstream, self._upstream = self._upstream, None
        if upstream is not None:
            upstream.cancel()
        inner, self._inner = self._inner, None
        if inner is not None:
            inner.cancel()
