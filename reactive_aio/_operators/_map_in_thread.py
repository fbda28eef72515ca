"""``map_in_thread``: apply a blocking function to every item in worker threads.

Each item runs through ``anyio.to_thread.run_sync`` under a ``CapacityLimiter`` of
*concurrency* threads, so blocking calls never stall the event loop.

Backpressure: demand bounds the work: upstream is asked for no more than
``min(concurrency, downstream demand)`` items beyond those already running or finished and
waiting, so at most *concurrency* calls run at once and nothing is computed that downstream
has not asked for. Results wait in a bounded buffer (at most *concurrency*) for their turn:
with ``ordered=True`` in upstream order, otherwise as they finish.
Errors: if *fn* raises or returns ``None``, upstream is cancelled first, then ``on_error``;
an upstream error is signalled at once (results still running are dropped). Cancelling
cancels upstream and the waiting tasks; a call already running in a thread finishes there,
but its result is dropped.
Loop: needs a running event loop at subscribe time; one task per item awaits the thread
(the thread hop, not the task, dominates the cost).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Any, Generic, TypeVar, final

import anyio
import anyio.to_thread
import attrs

from .._core import (
    MAX_DEMAND,
    NullSignalError,
    Publisher,
    QueueDrain,
    Subscriber,
    Subscription,
    require_not_none,
)

__all__ = ("MapInThreadPublisher",)

T = TypeVar("T")
R = TypeVar("R")

_PENDING: Any = object()


@final
@attrs.frozen
class MapInThreadPublisher(Publisher[R], Generic[T, R]):
    """What `Flux.map_in_thread` returns."""

    source: Publisher[T]
    fn: Callable[[T], R]
    concurrency: int = 1
    ordered: bool = True

    def __attrs_post_init__(self) -> None:
        if self.concurrency <= 0:
            raise ValueError(f"concurrency must be > 0, got {self.concurrency}")

    def subscribe(self, subscriber: Subscriber[R]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(
            _MapInThreadMain[T, R](
                subscriber, fn=self.fn, concurrency=self.concurrency, ordered=self.ordered
            )
        )


@final
@attrs.define(eq=False)
class _MapInThreadMain(QueueDrain[R], Subscriber[T], Generic[T, R]):
    _fn: Callable[[T], R] = attrs.field(kw_only=True, alias="fn")
    _concurrency: int = attrs.field(kw_only=True, alias="concurrency")
    _ordered: bool = attrs.field(kw_only=True, alias="ordered")
    _upstream: Subscription | None = attrs.field(default=None, init=False)
    _outer_done: bool = attrs.field(default=False, init=False)
    _limiter: anyio.CapacityLimiter | None = attrs.field(default=None, init=False)
    _results: deque[list[Any]] = attrs.field(factory=deque, init=False)
    """One slot per item, ``[result or _PENDING]``; in upstream order when ordered."""
    _occupied: int = attrs.field(default=0, init=False)
    """Items asked for upstream and not yet emitted: running, waiting or still to arrive."""
    _running: int = attrs.field(default=0, init=False)
    _tasks: set[asyncio.Task[None]] = attrs.field(factory=set, init=False)

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "2.13", "on_subscribe's subscription")
        if self._upstream is not None or self._outer_done or self._done:
            subscription.cancel()  # rule 2.5
            return
        self._upstream = subscription
        self.start()
        if self.done:  # cancelled from on_subscribe
            return
        if self._loop is None:
            self._fail(RuntimeError("map_in_thread needs a running event loop"))
            return
        self._limiter = anyio.CapacityLimiter(self._concurrency)
        self.signal()  # asks upstream for what the demand allows

    def on_next(self, item: T) -> None:
        if self._done:
            return
        loop = self._loop
        assert loop is not None
        slot: list[Any] = [_PENDING]
        if self._ordered:
            self._results.append(slot)
        self._running += 1
        task = loop.create_task(self._run(item, slot))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        self._upstream = None
        self._outer_done = True
        self._fail(error)

    def on_complete(self) -> None:
        self._upstream = None
        self._outer_done = True
        self.signal()

    async def _run(self, item: T, slot: list[Any]) -> None:
        try:
            result = await anyio.to_thread.run_sync(self._fn, item, limiter=self._limiter)
        except Exception as exc:  # the user's function failed: fail the stream
            self._running -= 1
            self._fail(exc)
            return
        self._running -= 1
        if self._done:
            return
        if result is None:
            self._fail(
                NullSignalError(f"rule 2.13: map_in_thread's function returned None for {item!r}")
            )
            return
        slot[0] = result
        if not self._ordered:
            self._results.append(slot)
        self.signal()

    def _drain_queues(self, limit: int) -> int:
        results = self._results
        emitted = 0
        if results:
            downstream = self._downstream
            assert downstream is not None
            on_next = downstream.on_next
            while emitted < limit and results and results[0][0] is not _PENDING:
                value = results.popleft()[0]
                self._occupied -= 1
                on_next(value)
                emitted += 1
                if self._done:
                    return emitted
        if self._outer_done:
            if not results and not self._running:
                self._complete()
            return emitted
        upstream = self._upstream
        if upstream is not None and self._limiter is not None:
            demand = self._requested
            if demand != MAX_DEMAND:
                demand -= emitted  # the drain subtracts what this pass emitted afterwards
            want = min(self._concurrency, demand) - self._occupied
            if want > 0:
                self._occupied += want
                upstream.request(want)
        return emitted

    def _release(self) -> None:
        upstream, self._upstream = self._upstream, None
        if upstream is not None:
            upstream.cancel()
        self._results.clear()
        current = asyncio.current_task(self._loop) if self._loop is not None else None
        for task in list(self._tasks):
            if task is not current:
                task.cancel()
