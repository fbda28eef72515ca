"""``flat_map``: map every item to an inner stream and merge the inner streams as they emit.

The function may return a publisher, an async iterable or an awaitable (one value); the kind
of the returned object decides (see ``_as_publisher``). A publisher whose items are at hand (a
`SyncSource`: ``range``, ``from_iterable``, ``just``, maps and filters over those) is not
subscribed: its iterator is pulled in this operator's drain (a `SyncInner`), which is what
makes short inner streams cheap. `FlatMapMain` (``ordered=True``) is also the engine of
``flat_map_sequential``, ``concat_map``, ``merge`` and ``concat``.

Backpressure: the outer source is asked for *concurrency* items up front and for more as
inner streams end, so at most *concurrency* inner streams run at once. Each inner
prefetches *prefetch* items into a bounded queue and is re-requested in batches of three
quarters of that as the queue drains. Downstream gets exactly what it requested; items wait in
the queues meanwhile. An inner whose items are at hand has no queue: it is pulled only for
the items emitted (one more when a pass stops at its limit, to find its end without more
demand), and when its turn comes it emits until demand runs out or it ends.
Errors: an error of the outer source or of any inner stream, or a raising function, cancels
the outer source and every inner stream, then ``on_error`` is signalled once; queued items
are dropped. With ``delay_errors=True`` an error is recorded instead: the other inner streams
run to their end (a raising function or an outer error stops new ones: the outer source is
cancelled), every queued item is emitted, and only then is the error signalled (several as
one ``ExceptionGroup``). Cancelling cancels the outer source and every inner stream.
Loop: none of its own; inner async iterables and awaitables run on the running loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Generic, TypeVar, final

import attrs

from .._core import (
    MAX_DEMAND,
    OuterDrain,
    Publisher,
    QueueSubscriber,
    StageScan,
    Subscriber,
    Subscription,
    SyncInner,
    require_not_none,
)
from ._as_publisher import as_inner

__all__ = ("DEFAULT_CONCURRENCY", "DEFAULT_PREFETCH", "FlatMapMain", "FlatMapPublisher")

T = TypeVar("T")
R = TypeVar("R")

DEFAULT_CONCURRENCY = 256
"""Inner streams that may run at once unless told otherwise."""

DEFAULT_PREFETCH = 32
"""Items each inner stream prefetches unless told otherwise."""


def check_sizes(concurrency: int, prefetch: int) -> None:
    """Reject non-positive sizes when the operator is built, not when it runs."""
    if concurrency <= 0:
        raise ValueError(f"concurrency must be > 0, got {concurrency}")
    if prefetch <= 0:
        raise ValueError(f"prefetch must be > 0, got {prefetch}")


@attrs.frozen
class FlatMapPublisher(Publisher[R], Generic[T, R]):
    """What `Flux.flat_map` returns; cold, so every subscribe starts afresh. The ordered
    flattenings (``flat_map_sequential``, ``concat_map``) are subclasses that name themselves
    and keep outer order."""

    source: Publisher[T]
    fn: Callable[[T], object]
    concurrency: int = DEFAULT_CONCURRENCY
    prefetch: int = DEFAULT_PREFETCH
    delay_errors: bool = False
    _NAME: ClassVar[str] = "flat_map"
    _ORDERED: ClassVar[bool] = False

    def __attrs_post_init__(self) -> None:
        check_sizes(self.concurrency, self.prefetch)

    def subscribe(self, subscriber: Subscriber[R]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(
            FlatMapMain[T, R](
                subscriber,
                fn=self.fn,
                concurrency=self.concurrency,
                prefetch=self.prefetch,
                ordered=self._ORDERED,
                name=self._NAME,
                delay_errors=self.delay_errors,
            )
        )


@final
@attrs.define(eq=False)
class FlatMapMain(OuterDrain[T, R], Generic[T, R]):
    """Subscribes to the outer source, runs the inner streams and merges their queues.

    Unordered, each pass starts at the next inner stream in turn so that one busy inner
    cannot starve the others. Ordered, only the oldest inner stream emits; the younger ones
    fill their queues (up to *prefetch*) and wait their turn.
    """

    _fn: Callable[[T], object] = attrs.field(kw_only=True, alias="fn")
    _concurrency: int = attrs.field(kw_only=True, alias="concurrency")
    _prefetch: int = attrs.field(kw_only=True, alias="prefetch")
    _ordered: bool = attrs.field(kw_only=True, alias="ordered")
    _name: str = attrs.field(kw_only=True, alias="name")
    _inners: list[QueueSubscriber[R] | SyncInner[R]] = attrs.field(factory=list, init=False)
    _cursor: int = attrs.field(default=0, init=False)

    # -- the outer source ---------------------------------------------------------------

    def _outer_started(self, subscription: Subscription) -> None:
        subscription.request(self._concurrency)

    def on_next(self, item: T) -> None:
        if self._done:
            return
        try:
            sync, publisher = as_inner(self._fn(item), self._name, self)
        except Exception as exc:  # user code fails the stream, never the caller
            if self._delay_errors:  # no more outer items; the running inners finish first
                self._outer_done = True
                upstream, self._upstream = self._upstream, None
                if upstream is not None:
                    upstream.cancel()
                self._errors.append(exc)
                self.signal()
            else:
                self._fail(exc)
            return
        if publisher is None:  # items at hand: pulled in the drain, nothing subscribed
            assert sync is not None
            self._inners.append(sync)
            # What goes out at once does not take a turn from the other inners (as for an
            # item that `_emit_now` hands over on arrival).
            cursor, idle = self._cursor, self.idle
            self.signal()
            if idle:
                self._cursor = cursor
            return
        inner = QueueSubscriber[R](self, self._prefetch)
        self._inners.append(inner)
        publisher.subscribe(inner)

    def scan_stage(self) -> StageScan:
        """Named as the operator built on it (``merge``, ``concat_map``); its running inner
        streams are its inner chains."""
        return attrs.evolve(super().scan_stage(), operator=self._name, inners=tuple(self._inners))

    def inner_next(self, inner: QueueSubscriber[Any]) -> None:
        if (not self._ordered or inner is self._inners[0]) and self._emit_now(inner.queue):
            inner.consumed(1)
        else:
            self._drain()

    # -- the drain ----------------------------------------------------------------------

    def _emit(self, limit: int) -> int:
        inners = self._inners
        if not inners:
            if self._outer_done:
                self._end()
            return 0
        emit_from = self._emit_from
        emitted = 0
        finished = 0
        if self._ordered:
            while inners:
                inner = inners[0]
                if type(inner) is SyncInner:
                    emitted += inner.pull(self, limit - emitted)
                    if self._done:
                        return emitted
                    if not inner.done:
                        break
                else:
                    queue = inner.queue
                    if queue:
                        take = emit_from(queue, limit - emitted)
                        if self._done:
                            return emitted + take
                        emitted += take
                        inner.consumed(take)
                    if queue or not inner.done:
                        break
                del inners[0]
                finished += 1
        else:
            count = len(inners)
            start = self._cursor % count
            for offset in range(count):
                inner = inners[(start + offset) % count]
                if type(inner) is SyncInner:
                    if not inner.done:  # (without demand it still finds out whether it ended)
                        if emitted < limit:
                            self._cursor = start + offset + 1  # the next pass starts after it
                        emitted += inner.pull(self, limit - emitted)
                        if self._done:
                            return emitted
                    if inner.done:
                        finished += 1
                else:
                    queue = inner.queue
                    if queue:
                        if emitted < limit:
                            self._cursor = start + offset + 1
                        take = emit_from(queue, limit - emitted)
                        if self._done:
                            return emitted + take
                        emitted += take
                        inner.consumed(take)
                    if inner.done and not queue:
                        finished += 1
            if finished:
                self._inners = [inner for inner in inners if not _finished(inner)]
        if finished:
            if not self._inners and self._outer_done:
                self._end()
                return emitted
            upstream = self._upstream
            if upstream is not None and self._concurrency != MAX_DEMAND:
                upstream.request(finished)  # may subscribe new inners; they signal a new pass
        return emitted

    def _release(self) -> None:
        upstream, self._upstream = self._upstream, None
        if upstream is not None:
            upstream.cancel()
        inners: list[QueueSubscriber[Any] | SyncInner[Any]] = self._inners
        self._inners = []
        for inner in inners:
            inner.cancel()


def _finished(inner: QueueSubscriber[Any] | SyncInner[Any]) -> bool:
    """Nothing more will come from *inner*: a synchronous one is done, a subscribed one is
    done and its queue emptied."""
    return inner.done and (type(inner) is SyncInner or not inner.queue)
