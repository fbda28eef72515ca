"""``map_async``: apply an ``async`` function to every item, at most *concurrency* calls at once.

One call at a time over a source whose items are at hand (``range``, ``from_iterable``,
``just`` and the maps over them: `items_at_hand`), there is nothing to coordinate: the calls
are `AwaitedCalls`, awaited one after another in one loop that pulls the source's items
itself. A fold (``reduce``, ``to_list``, ``last``) runs that loop in the awaiting task, with
the fold and the maps and filters after ``map_async`` inline, as a hand-written ``for`` loop
awaiting each call would (`fold_at_hand`); a subscriber is served by one task that runs it
within demand (`serve_calls`). A call that completes without suspending costs no task
switch, and a call that suspends, only its own.

Otherwise calls run in worker tasks owned by the subscription. A worker takes the next waiting
item, awaits the call, hands the result to the downstream buffer and moves straight on to the
next waiting item, so a steady stream runs through ONE task per worker rather than one task
per item; a worker ends when nothing is waiting and a new one starts with the next item.
``ordered=True`` (the default) emits results in item order; ``ordered=False`` emits each result
as soon as it is ready. A worker awaits the calls one after another with no machinery between
them: a result that may go downstream goes at once (`DrainSubscription._emit_now`).

Every call is awaited in a task (the awaiting one, or the operator's), never stepped by hand on
the stack of whoever asked for the item: there its first step would see that caller's task as
`asyncio.current_task` (an ``asyncio.timeout`` or ``TaskGroup`` entered there would cancel that
task, not the call), and ``send`` with a caught ``StopIteration`` costs over twice an
``await`` of the call.

Backpressure: over a source at hand with one call at a time, a call is made only for an item
downstream asked for (none ahead of demand). Otherwise upstream is asked for `PREFETCH` items
(*concurrency*, if more) up front, then for three quarters of that each time as many results
were delivered downstream, so waiting items, running calls and undelivered results never
exceed the window together; a result is handed to the subscriber as soon as it is ready (and,
in order, due) when demand allows, and buffered otherwise (a `BufferDrain` emits it within
demand).
Errors: if the function raises (also `asyncio.CancelledError` when the stream was not
cancelled: it awaited something cancelled elsewhere) or returns ``None``, upstream is
cancelled and running calls are cancelled, then ``on_error``; an upstream error does the
same, and undelivered results are dropped (errors are not delayed). A fold raises the error
from its ``await``; cancelling the awaiting task cancels the running call.
Loop: tasks are created on the loop the subscription belongs to; subscribing outside of a
running loop fails with ``on_error(RuntimeError)``. The loop gets a turn every `DRAIN_BATCH`
calls, so calls that never suspend cannot starve it.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar, final

import attrs

from .._core import (
    DRAIN_BATCH,
    AwaitedCalls,
    AwaitingSource,
    BufferDrain,
    Publisher,
    Subscriber,
    Subscription,
    cancelled_elsewhere,
    cancelling_this_task,
    items_at_hand,
    null_result_error,
    require_not_none,
    serve_calls,
)

__all__ = ("PREFETCH", "MapAsyncPublisher")

T = TypeVar("T")
R = TypeVar("R")

PREFETCH = 32
"""Items asked of upstream up front (*concurrency*, if more), re-requested three quarters at a
time as results are delivered."""


@final
@attrs.frozen(kw_only=True)
class MapAsyncPublisher(Publisher[R], AwaitingSource[R], Generic[T, R]):
    """What `Flux.map_async` returns."""

    source: Publisher[T]
    fn: Callable[[T], Awaitable[R]]
    concurrency: int = 1
    ordered: bool = True

    def __attrs_post_init__(self) -> None:
        if self.concurrency <= 0:
            raise ValueError(f"map_async concurrency must be > 0, got {self.concurrency}")

    def awaited_calls(self) -> AwaitedCalls[R] | None:
        if self.concurrency > 1:
            return None
        items = items_at_hand(self.source)
        return None if items is None else AwaitedCalls(items, self.fn, "map_async")

    def subscribe(self, subscriber: Subscriber[R]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        calls = self.awaited_calls()
        if calls is not None:
            serve_calls(subscriber, calls)
            return
        self.source.subscribe(
            _MapAsync(
                subscriber,
                fn=self.fn,
                concurrency=self.concurrency,
                # with one call at a time, results are in order anyway
                ordered=self.ordered and self.concurrency > 1,
                prefetch=max(self.concurrency, PREFETCH),
            )
        )


@final
@attrs.define(eq=False)
class _MapAsync(BufferDrain[R], Subscriber[T], Generic[T, R]):
    """Upstream's subscriber and downstream's subscription at once."""

    _fn: Callable[[T], Awaitable[R]] = attrs.field(kw_only=True, alias="fn")
    _concurrency: int = attrs.field(kw_only=True, alias="concurrency")
    _ordered: bool = attrs.field(kw_only=True, alias="ordered")
    _waiting: deque[T] = attrs.field(factory=deque, init=False)
    _workers: set[asyncio.Task[None]] = attrs.field(factory=set, init=False)
    _finished_early: dict[int, R] = attrs.field(factory=dict, init=False)
    """Ordered mode: results that are ready before an earlier item's."""
    _next_in: int = attrs.field(default=0, init=False)
    """Ordered mode: the sequence number of the next item a worker takes."""
    _next_out: int = attrs.field(default=0, init=False)

    # -- upstream signals ---------------------------------------------------------------

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "2.13", "on_subscribe's subscription")
        if self._upstream is not None or self._downstream is None:
            subscription.cancel()  # rule 2.5
            return
        self._upstream = subscription
        self.start()
        if self.done:
            return
        if self._loop is None:
            self._fail_now(RuntimeError("map_async needs a running event loop"))
            return
        self._subscribed(subscription)  # asks for the prefetch window

    def on_next(self, item: T) -> None:
        if self._done:
            return
        self._waiting.append(item)
        if len(self._workers) < self._concurrency:
            loop = self._loop
            assert loop is not None
            worker = loop.create_task(self._work())
            self._workers.add(worker)

    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        self._upstream = None
        self._fail_now(error)

    def on_complete(self) -> None:
        self._upstream = None
        self._upstream_done = True
        self._finish_if_idle()

    # -- workers ------------------------------------------------------------------------

    async def _work(self) -> None:
        waiting = self._waiting
        fn = self._fn
        ordered = self._ordered
        queue = self._queue
        emit_now = self._emit_now
        consumed = self._consumed
        budget = DRAIN_BATCH
        try:
            while waiting and not self._done:
                budget -= 1
                if not budget:
                    # Calls that never suspend would otherwise keep the loop to this task.
                    budget = DRAIN_BATCH
                    await asyncio.sleep(0)
                    if not waiting or self._downstream is None:
                        break
                item = waiting.popleft()
                if ordered:
                    seq = self._next_in
                    self._next_in = seq + 1
                try:
                    value = await fn(item)
                except Exception as exc:
                    self._fail_now(exc)
                    return
                except asyncio.CancelledError as exc:
                    if cancelling_this_task():
                        raise
                    self._fail_now(cancelled_elsewhere("map_async's function", exc))
                    return
                if value is None:
                    self._fail_now(null_result_error("map_async's function", item))
                    return
                if self._downstream is None:  # cancelled while the call ran
                    return
                if ordered:
                    self._deliver_in_order(seq, value)
                    continue
                queue.append(value)  # (`_deliver` inlined: once per item)
                if emit_now(queue):
                    consumed(1)
                else:
                    self.signal()
        finally:
            me = asyncio.current_task()
            if me is not None:
                self._workers.discard(me)
            self._finish_if_idle()

    def _deliver(self, value: R) -> None:
        """Hand *value* to the subscriber at once when it may take it, else buffer it."""
        queue = self._queue
        queue.append(value)
        if self._emit_now(queue):
            self._consumed(1)
        else:
            self.signal()

    def _deliver_in_order(self, seq: int, value: R) -> None:
        if seq != self._next_out:
            self._finished_early[seq] = value
            return
        self._deliver(value)
        seq += 1
        early = self._finished_early
        while seq in early:
            self._deliver(early.pop(seq))
            seq += 1
        self._next_out = seq

    def _finish_if_idle(self) -> None:
        if self._upstream_done and not self._workers and not self._waiting and not self.done:
            self.finish()

    def _fail_now(self, error: BaseException) -> None:
        """Fail without waiting for buffered results: release (cancels work), then on_error."""
        if self.done:
            return
        self._fault = error
        self._done = True  # a drain further up the stack stops emitting at once
        self._drain()

    # -- BufferDrain hooks --------------------------------------------------------------

    def _release(self) -> None:
        super()._release()  # (cancels upstream)
        self._waiting.clear()
        self._finished_early.clear()
        me = asyncio.current_task(self._loop) if self._loop is not None else None
        for worker in self._workers:
            if worker is not me:
                worker.cancel()
