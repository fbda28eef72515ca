"""`PullSubscription`: the one shape of every connector that pulls from a broker.

(A cursor is read as an `AsyncSource` of batches instead: ``from_query``.)

Outstanding demand not yet covered by fetched items becomes one ``fetch(n)`` with
``n = min(uncovered demand, max_batch)``; one task per subscription runs the fetches, one at a
time, and only while there is uncovered demand, so a source never holds more than what was
requested (and a fetch that returns more than it was asked for is bounded by one batch).
Emission, demand and the terminal signals come from the core's `DrainSubscription`:
fetched items wait in a queue that the drain hands out within demand, from the loop turn after
the fetch, so that a next fetch (when uncovered demand remains) is already on its way while they
are emitted; the end of the source or its failure is signalled after the queued items.

Subclasses implement `_open`, `_fetch` and `_close`; cancel (or termination) cancels the task,
whose ``finally`` runs `_close`, so a consumer, a cursor or a connection is closed on every path.
"""

from __future__ import annotations

__all__ = ("PullSubscription",)

import asyncio
from collections import deque
from collections.abc import Sequence
from typing import Generic, TypeVar

import attrs

from .._core import DrainSubscription, end_stream, report_error

T = TypeVar("T")


@attrs.define(eq=False)
class PullSubscription(DrainSubscription[T], Generic[T]):
    """Base of the pulling connectors; see the module docs."""

    _max_batch: int = attrs.field(kw_only=True, alias="max_batch")
    _queue: deque[T] = attrs.field(factory=deque, init=False)
    _task: asyncio.Task[None] | None = attrs.field(default=None, init=False)
    _wake: asyncio.Future[None] | None = attrs.field(default=None, init=False)
    _finished: bool = attrs.field(default=False, init=False)
    _failure: BaseException | None = attrs.field(default=None, init=False)
    fetched: int = attrs.field(default=0, init=False)
    """Items the fetches returned so far."""
    closed: bool = attrs.field(default=False, init=False)
    """True once `_close` ran (after cancel, completion or failure)."""

    # -- what subclasses implement ------------------------------------------------------

    async def _open(self) -> None:
        """Connect, bind the consumer, open the cursor."""

    async def _fetch(self, n: int) -> Sequence[T] | None:
        """At most about *n* items; an empty sequence when none came in time; None at the end."""
        raise NotImplementedError

    async def _close(self) -> None:
        """Release what `_open` acquired; runs once, on every path."""

    # -- state for statistics -----------------------------------------------------------

    @property
    def queued(self) -> int:
        """Fetched items not yet handed to the subscriber."""
        return len(self._queue)

    @property
    def outstanding(self) -> int:
        """Demand the subscriber signalled that no item has met yet."""
        return self._requested

    # -- lifecycle ----------------------------------------------------------------------

    def begin(self) -> None:
        """Signal ``on_subscribe`` and start the fetch task (or fail without a loop)."""
        if self._loop is None:
            self._failure = RuntimeError(f"{type(self).__name__} needs a running event loop")
            self._finished = True
            self.closed = True
            self.start()
            return
        self.start()
        if not self._done:
            self._task = self._loop.create_task(self._run())

    def _emit(self, limit: int) -> int:
        queue = self._queue
        count = self._emit_from(queue, limit) if queue else 0
        if not queue and not self._done:
            if self._finished:
                failure, self._failure = self._failure, None
                end_stream(self, failure)
            elif self._requested > count:
                wake = self._wake
                if wake is not None:
                    self._wake = None
                    if not wake.done():
                        wake.set_result(None)
        return count

    async def _run(self) -> None:
        assert self._loop is not None
        queue = self._queue
        max_batch = self._max_batch
        try:
            await self._open()
            while not self._done:
                want = self._requested - len(queue)
                if want <= 0:
                    self._wake = self._loop.create_future()
                    await self._wake
                    continue
                items = await self._fetch(want if want < max_batch else max_batch)
                if items is None:
                    self._finished = True
                    break
                if items:
                    queue.extend(items)
                    self.fetched += len(items)
                    # Drained from the next loop turn: when demand asks for more, the next
                    # fetch goes out first, so the source works on it while these are emitted.
                    self.signal_soon()
        except asyncio.CancelledError:
            if not self._done:  # cancelled from outside, not by our own release
                raise
        except Exception as exc:
            self._failure = exc
            self._finished = True
        finally:
            await self._close_once()
        if self._finished:
            self._drain()

    async def _close_once(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            await self._close()
        except Exception as exc:  # closing must not hide the stream's own outcome
            report_error(exc, f"{type(self).__name__} failed to close", self._loop)

    def _release(self) -> None:
        self._queue.clear()
        task = self._task
        if task is not None and not task.done() and task is not asyncio.current_task(self._loop):
            task.cancel()
