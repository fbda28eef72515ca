"""`ReplayProcessor` and `BehaviorProcessor`: late subscribers first get the recent past.

Backpressure: upstream is asked for everything (unbounded-in); every subscriber is served at
its own pace from a shared linked history, so a slow subscriber never holds up a fast one.
The history keeps the last ``size`` items and/or the items younger than ``ttl`` seconds (on
the loop's clock); a subscriber that lags behind keeps the nodes it has yet to read alive,
nothing more.
Errors: completion reaches each subscriber after it has read the history; an upstream error
reaches every current subscriber at once (rule 1.4), unread items notwithstanding; a
subscriber after termination gets the retained history, then the terminal signal. A
subscriber whose signal raises is cancelled and the error reported (rule 2.13); so is an
upstream error after termination (a second ``on_error``, or one after ``on_complete``). When
the last subscriber cancels, upstream is cancelled unless ``auto_cancel=False``.
Loop: upstream signals from other threads are handed over to the loop the processor was
first used on, in order.
Context: every signal after ``on_subscribe`` reaches a subscriber inside the `contextvars`
context in which it subscribed (so do the callbacks of the operators after it), whichever
task or callback the upstream emits from: each subscriber's drain passes run inside it.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import Callable
from typing import Any, Generic, TypeVar, final

import attrs

from .._core import (
    MAX_DEMAND,
    DrainSubscription,
    LoopBound,
    Processor,
    StageScan,
    Subscriber,
    Subscription,
    current_loop,
    hand_over,
    operator_name,
    report_late_error,
    require_not_none,
    stage_state,
)

__all__ = ("BehaviorProcessor", "ReplayProcessor")

T = TypeVar("T")

_MISSING: Any = object()


@final
@attrs.define(eq=False)
class _Node(Generic[T]):
    item: T
    time: float
    next: _Node[T] | None = None


@attrs.define(eq=False)
class _ReplayBase(Processor[T, T], LoopBound, Generic[T]):
    """The shared history and subscriber bookkeeping."""

    _size: int | None = attrs.field(default=None, kw_only=True, alias="size")
    _ttl: float | None = attrs.field(default=None, kw_only=True, alias="ttl")
    _clock: Callable[[], float] | None = attrs.field(default=None, kw_only=True, alias="clock")
    _auto_cancel: bool = attrs.field(default=True, kw_only=True, alias="auto_cancel")
    """Cancel upstream when the last subscriber cancels (reference counting)."""
    """Where item ages are read; the loop's clock (``loop.time``) when not given."""
    _head: _Node[T] = attrs.field(init=False)
    """A consumed (or empty) node whose ``next`` is the oldest retained item."""
    _tail: _Node[T] = attrs.field(init=False)
    _count: int = attrs.field(default=0, init=False)
    _subscribers: tuple[_ReplaySubscription[T], ...] = attrs.field(default=(), init=False)
    _upstream: Subscription | None = attrs.field(default=None, init=False)
    finished: bool = attrs.field(default=False, init=False)
    failure: BaseException | None = attrs.field(default=None, init=False)
    _loop: asyncio.AbstractEventLoop | None = attrs.field(factory=current_loop, init=False)

    def __attrs_post_init__(self) -> None:
        if self._size is not None and self._size < 0:
            raise ValueError(f"replay size must be >= 0, got {self._size}")
        if self._ttl is not None and self._ttl < 0:
            raise ValueError(f"replay ttl must be >= 0, got {self._ttl}")
        self._head = self._tail = _Node[T](_MISSING, 0.0)

    @property
    def subscriber_count(self) -> int:
        """Subscribers currently attached."""
        return len(self._subscribers)

    @property
    def retained(self) -> int:
        """Items in the history a new subscriber would be replayed (before ttl expiry)."""
        return self._count

    # -- Subscriber ---------------------------------------------------------------------

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "2.13", "on_subscribe's subscription")
        self._bind()
        if self._upstream is not None or self.finished:
            subscription.cancel()  # rule 2.5, or already terminated
            return
        self._upstream = subscription
        subscription.request(MAX_DEMAND)

    def on_next(self, item: T) -> None:
        if item is None:
            require_not_none(item, "2.13", "on_next's item")
        if current_loop() is not self._loop and hand_over(self._loop, self.on_next, item):
            return
        if self.finished:
            return
        self._append(item)
        for subscription in self._subscribers:
            subscription.signal()

    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        if hand_over(self._loop, self.on_error, error):
            return
        if self.finished:
            report_late_error(error, self._loop)
            return
        self._finish(error)

    def on_complete(self) -> None:
        if hand_over(self._loop, self.on_complete):
            return
        self._finish(None)

    # -- Publisher ----------------------------------------------------------------------

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self._bind()
        self._expire()
        subscription = _ReplaySubscription[T](
            subscriber, processor=self, node=self._head, context=contextvars.copy_context()
        )
        subscription.start()
        if not subscription.done:  # visible to on_next only after on_subscribe
            self._subscribers = (*self._subscribers, subscription)

    def disconnect(self, error: BaseException) -> None:
        """Cancel upstream and fail every subscriber with *error* (a connection was disposed)."""
        if hand_over(self._loop, self.disconnect, error):
            return
        upstream, self._upstream = self._upstream, None
        if upstream is not None:
            upstream.cancel()
        self._finish(error)

    @property
    def terminated(self) -> bool:
        """True once upstream finished."""
        return self.finished

    # -- internals ----------------------------------------------------------------------

    def _bind(self) -> None:
        if self._loop is None:
            loop = current_loop()
            if loop is not None:
                self._loop = loop

    def _now(self) -> float:
        if self._clock is not None:
            return self._clock()
        loop = self._loop
        return loop.time() if loop is not None else time.monotonic()

    def _append(self, item: T) -> None:
        node = _Node[T](item, self._now() if self._ttl is not None else 0.0)
        self._tail.next = node
        self._tail = node
        self._count += 1
        size = self._size
        if size is not None:
            while self._count > size:
                self._evict()
        if self._ttl is not None:
            self._expire()

    def _evict(self) -> None:
        following = self._head.next
        assert following is not None
        self._head = following  # the evicted node becomes the marker in front of the history
        self._count -= 1

    def _expire(self) -> None:
        ttl = self._ttl
        if ttl is None:
            return
        cutoff = self._now() - ttl
        following = self._head.next
        while following is not None and following.time < cutoff:
            self._head = following
            self._count -= 1
            following = following.next

    def _finish(self, error: BaseException | None) -> None:
        if self.finished:
            return
        self.finished = True
        self.failure = error
        self._upstream = None
        for subscription in self._subscribers:
            # rule 1.4: a failure reaches every current subscriber at once, even one that has
            # not read everything yet; completion waits for the items
            subscription.fail_fast = error is not None
            subscription.signal()

    def scan_stage(self) -> StageScan:
        """The items kept for replay and their bound, and the upstream."""
        return StageScan(
            operator=operator_name(type(self)),
            state=stage_state(ended=self.finished, error=self.failure),
            buffered=self._count,
            capacity=self._size,
            error=self.failure,
            upstream=self._upstream,
            loop=self._loop,
            tags=(("subscribers", str(len(self._subscribers))),),
        )

    def _leave(self, subscription: _ReplaySubscription[T]) -> None:
        before = self._subscribers
        remaining = tuple(s for s in before if s is not subscription)
        self._subscribers = remaining
        if before and not remaining and self._auto_cancel and not self.finished:
            upstream, self._upstream = self._upstream, None
            if upstream is not None:
                upstream.cancel()  # reference counting: nobody is listening any more


@final
@attrs.define(eq=False)
class ReplayProcessor(_ReplayBase[T]):
    """Replays the last *size* items (all if ``None``) younger than *ttl* seconds, then live.

    Each subscriber receives its signals inside the `contextvars` context it subscribed in.

    Args:
        size: how many items to keep for late subscribers; ``None`` keeps everything.
        ttl: how long (seconds, loop clock) an item stays replayable; ``None`` forever.
        clock: a time source in seconds instead of the loop's clock (for tests).
        auto_cancel: cancel upstream when the last subscriber cancels (reference counting).
    """


@final
@attrs.define(eq=False)
class BehaviorProcessor(_ReplayBase[T]):
    """A new subscriber first gets the latest item (or *initial* before any), then live.

    Each subscriber receives its signals inside the `contextvars` context it subscribed in.

    Args:
        initial: the item to replay until upstream sends one; omit for none.
        auto_cancel: cancel upstream when the last subscriber cancels (reference counting).
    """

    _initial: Any = attrs.field(default=_MISSING, kw_only=True, alias="initial")
    _size: int | None = attrs.field(default=1, init=False)

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        if self._initial is not _MISSING:
            self._append(require_not_none(self._initial, "2.13", "the initial item"))


@final
@attrs.define(eq=False)
class _ReplaySubscription(DrainSubscription[T]):
    _processor: _ReplayBase[T] = attrs.field(kw_only=True, alias="processor")
    _node: _Node[T] = attrs.field(kw_only=True, alias="node")
    """The last node this subscriber has read; its ``next`` is the next item."""
    fail_fast: bool = attrs.field(default=False, init=False)

    def scan_stage(self) -> StageScan:
        return attrs.evolve(super().scan_stage(), upstream=self._processor)

    def _emit(self, limit: int) -> int:
        if self.fail_fast:
            failure = self._processor.failure
            assert failure is not None
            self._error(failure)
            return 0
        node = self._node
        count = 0
        if limit:
            downstream = self._downstream
            assert downstream is not None
            on_next = downstream.on_next
            following = node.next
            while following is not None and count < limit:
                node = following
                count += 1
                on_next(node.item)
                if self._done:
                    break
                following = node.next
            self._node = node
        if node.next is None and not self._done:
            processor = self._processor
            if processor.finished:
                failure = processor.failure
                if failure is None:
                    self._complete()
                else:
                    self._error(failure)
        return count

    def _release(self) -> None:
        self._processor._leave(self)
        self._node = _Node[T](_MISSING, 0.0)  # drop the history this subscriber kept alive
