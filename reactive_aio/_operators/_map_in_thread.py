"""``map_in_thread``: apply a blocking function to every item in worker threads.

Items run through ``anyio.to_thread.run_sync`` under a ``CapacityLimiter`` of *concurrency*
threads, so blocking calls never stall the event loop. To keep the per-item cost low, items
that are waiting when a worker becomes free go to it as one batch (split evenly among the free
workers, at most `MAX_BATCH` each), and a worker hands results back at least every
`TIME_SLICE` seconds: a fast function crosses the thread boundary once per batch, a slow one
once per item, so its results are not held back by the rest of its batch.

Backpressure: demand bounds the work: upstream is asked for no more than
``min(concurrency * MAX_BATCH, downstream demand)`` items beyond those already asked for and
not yet emitted, so nothing is computed that downstream has not asked for and at most
*concurrency* threads work at once. Results are emitted in upstream order with
``ordered=True``, otherwise as soon as they are ready.
Errors: if *fn* raises (`asyncio.CancelledError` included) or returns ``None``, the results
of the items before it are still emitted (in order), then upstream is cancelled and
``on_error`` signalled. An upstream error is
signalled at once (work in flight is dropped). Cancelling cancels upstream and abandons the
workers: a call already running in a thread finishes there, its result is dropped.
Loop: needs a running event loop at subscribe time; one task per batch awaits the thread.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar, final

import anyio
import anyio.to_thread
import attrs

from .._core import (
    NullSignalError,
    OuterDrain,
    Publisher,
    Subscriber,
    Subscription,
    cancelled_elsewhere,
    produced,
    require_not_none,
)

__all__ = ("MAX_BATCH", "TIME_SLICE", "MapInThreadPublisher")

T = TypeVar("T")
R = TypeVar("R")

MAX_BATCH = 32
"""Most items one worker takes at a time."""

TIME_SLICE = 0.002
"""Seconds a worker computes before handing the results so far back to the loop."""


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
class _Batch(Generic[T, R]):
    """Items given to one worker, and what came back so far."""

    items: list[T]
    results: deque[R] = attrs.field(factory=deque)
    """Computed and not yet emitted."""
    finished: bool = False
    error: BaseException | None = None


@final
@attrs.define(eq=False)
class _MapInThreadMain(OuterDrain[T, R], Generic[T, R]):
    _fn: Callable[[T], R] = attrs.field(kw_only=True, alias="fn")
    _concurrency: int = attrs.field(kw_only=True, alias="concurrency")
    _ordered: bool = attrs.field(kw_only=True, alias="ordered")
    _limiter: anyio.CapacityLimiter | None = attrs.field(default=None, init=False)
    _pending: deque[T] = attrs.field(factory=deque, init=False)
    """Items received and not yet given to a worker."""
    _batches: list[_Batch[T, R]] = attrs.field(factory=list, init=False)
    """Batches given to workers, in upstream order, until all their results are emitted."""
    _free: int = attrs.field(
        init=False, default=attrs.Factory(lambda self: self._concurrency, takes_self=True)
    )
    """Workers without a batch."""
    _occupied: int = attrs.field(default=0, init=False)
    """Items asked for upstream and not yet emitted."""
    _tasks: set[asyncio.Task[None]] = attrs.field(factory=set, init=False)

    # -- upstream -----------------------------------------------------------------------

    def _outer_started(self, subscription: Subscription) -> None:
        if self._loop is None:
            self._fail(RuntimeError("map_in_thread needs a running event loop"))
            return
        self._limiter = anyio.CapacityLimiter(self._concurrency)
        self.signal()  # asks upstream for what the demand allows

    def on_next(self, item: T) -> None:
        if self._done:
            return
        self._pending.append(item)
        self.signal()  # a free worker takes it (with whatever else arrived in this burst)

    # -- the workers --------------------------------------------------------------------

    def _apply(self, items: list[T], start: int) -> tuple[list[R], BaseException | None]:
        """In a worker thread: results for ``items[start:]``, stopping after `TIME_SLICE`."""
        fn = self._fn
        results: list[R] = []
        deadline = time.perf_counter() + TIME_SLICE
        for index in range(start, len(items)):
            item = items[index]
            try:
                result = fn(item)
            except Exception as exc:  # the user's function failed: the stream fails
                return results, exc
            except asyncio.CancelledError as exc:  # no task runs here: it is the function's own
                return results, cancelled_elsewhere("map_in_thread's function", exc)
            if result is None:
                error = NullSignalError(
                    f"rule 2.13: map_in_thread's function returned None for {item!r}"
                )
                return results, error
            results.append(result)
            if time.perf_counter() > deadline:
                break
        return results, None

    async def _work(self, batch: _Batch[T, R]) -> None:
        items = batch.items
        done = 0
        while True:
            results, error = await anyio.to_thread.run_sync(
                self._apply, items, done, abandon_on_cancel=True, limiter=self._limiter
            )
            if self._done:
                return
            batch.results.extend(results)
            done += len(results)
            if error is not None or done == len(items):
                batch.error = error
                batch.finished = True
                self._free += 1
                self.signal()
                return
            self.signal()

    def _dispatch(self) -> None:
        """Give waiting items to free workers, evenly, as batches."""
        pending = self._pending
        loop = self._loop
        assert loop is not None
        while self._free and pending:
            size = min(-(-len(pending) // self._free), MAX_BATCH)
            batch = _Batch[T, R]([pending.popleft() for _ in range(size)])
            self._free -= 1
            self._batches.append(batch)
            task = loop.create_task(self._work(batch))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    # -- the drain ----------------------------------------------------------------------

    def _emit(self, limit: int) -> int:
        emitted = 0
        batches = self._batches
        if batches:
            index = 0
            while index < len(batches):
                batch = batches[index]
                results = batch.results
                if results:
                    count = self._emit_from(results, limit - emitted)
                    self._occupied -= count
                    emitted += count
                    if self._done:
                        return emitted
                if results or not batch.finished:
                    if self._ordered:
                        break  # later batches wait for this one
                    index += 1
                    continue
                if batch.error is not None:
                    self._fail(batch.error)  # after the results of the items before it
                    return emitted
                del batches[index]
        if self._limiter is None:
            return emitted
        if self._pending and self._free:
            self._dispatch()
        if self._outer_done:
            if not batches and not self._pending:
                self._complete()
            return emitted
        upstream = self._upstream
        if upstream is not None:
            # the drain subtracts what this pass emitted afterwards
            demand = produced(self._requested, emitted)
            want = min(self._concurrency * MAX_BATCH, demand) - self._occupied
            if want > 0:
                self._occupied += want
                upstream.request(want)  # items that arrive now are dispatched by the next pass
        return emitted

    def _release(self) -> None:
        upstream, self._upstream = self._upstream, None
        if upstream is not None:
            upstream.cancel()
        self._pending.clear()
        self._batches = []
        current = asyncio.current_task(self._loop) if self._loop is not None else None
        for task in list(self._tasks):
            if task is not current:
                task.cancel()
