"""`TaskSink`: the shared half of the connector sinks whose I/O runs on one task.

A sink subscribes, starts its task on the subscriber's loop, and that task does every await
(connect, write, publish): ``on_next`` only buffers and wakes it. Upstream's end is recorded
and the task told; the result (or the first failure) settles the future that `TaskSink.wait`
returns. A failure cancels upstream once; the task is never interrupted inside an await of the
driver (an interrupted COPY or publish leaves the driver's state behind) and stops at its next
turn instead.
"""

from __future__ import annotations

__all__ = ("TaskSink",)

import asyncio
from collections.abc import Generator
from typing import Any, Generic, TypeVar

import attrs

from .._core import Subscriber, Subscription, current_loop, report_error, require_not_none

T = TypeVar("T")


@attrs.define(eq=False)
class TaskSink(Subscriber[T], Generic[T]):
    """Base of `PostgresSink` and `JetStreamSink`; subclasses implement `_run` and `on_next`."""

    _upstream: Subscription | None = attrs.field(default=None, init=False)
    _upstream_done: bool = attrs.field(default=False, init=False)
    _upstream_error: BaseException | None = attrs.field(default=None, init=False)
    _stopped: bool = attrs.field(default=False, init=False)
    _loop: asyncio.AbstractEventLoop | None = attrs.field(default=None, init=False)
    _future: asyncio.Future[int] | None = attrs.field(default=None, init=False)
    _task: asyncio.Task[None] | None = attrs.field(default=None, init=False)
    _wake: asyncio.Future[None] | None = attrs.field(default=None, init=False)

    # -- what subclasses implement ------------------------------------------------------

    async def _run(self) -> None:
        """Connect, then serve the buffer until upstream ended or `_stopped`; call `_finish`."""
        raise NotImplementedError

    def _stopping(self) -> None:
        """Called once when the sink stops early (timers to cancel)."""

    # -- awaiting -----------------------------------------------------------------------

    async def wait(self) -> int:
        """Wait until the stream ended and everything landed; return the count landed."""
        if self._future is None:
            self._loop = self._loop or asyncio.get_running_loop()
            self._future = self._loop.create_future()
        return await asyncio.shield(self._future)

    def __await__(self) -> Generator[Any, None, int]:
        return self.wait().__await__()

    async def aclose(self) -> None:
        """Cancel, then wait until the task has closed its connection."""
        self._fail(asyncio.CancelledError())
        task = self._task
        if task is not None:
            await asyncio.wait([task])

    # -- Subscriber ---------------------------------------------------------------------

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "2.13", "on_subscribe's subscription")
        if self._upstream is not None or self._stopped:
            subscription.cancel()  # rule 2.5, or already stopped
            return
        loop = current_loop()
        if loop is None:
            subscription.cancel()
            raise RuntimeError(f"{type(self).__name__} needs a running event loop")
        self._upstream = subscription
        self._loop = loop
        if self._future is None:
            self._future = loop.create_future()
        self._task = loop.create_task(self._run())

    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        if self._upstream_done:
            return
        self._upstream_done = True
        self._upstream_error = error
        self._upstream = None
        self._signal()

    def on_complete(self) -> None:
        if self._upstream_done:
            return
        self._upstream_done = True
        self._upstream = None
        self._signal()

    # -- for subclasses -----------------------------------------------------------------

    @property
    def _accepting(self) -> bool:
        """Items arriving now are taken (not stopped, upstream not ended)."""
        return not (self._stopped or self._upstream_done)

    def _request(self, n: int) -> None:
        upstream = self._upstream
        if upstream is not None and not self._stopped and n > 0:
            upstream.request(n)

    def _signal(self) -> None:
        """Wake the task."""
        wake = self._wake
        if wake is not None:
            self._wake = None
            if not wake.done():
                wake.set_result(None)

    async def _idle(self) -> None:
        """Wait for the next `_signal`."""
        assert self._loop is not None
        self._wake = self._loop.create_future()
        await self._wake

    def _finish(self, landed: int) -> None:
        """The task is done: settle with *landed*, or upstream's error, unless stopped."""
        if self._stopped:
            return
        self._stopped = True
        future = self._future
        if future is not None and not future.done():
            if self._upstream_error is not None:
                future.set_exception(self._upstream_error)
            else:
                future.set_result(landed)

    def _fail(self, error: BaseException) -> None:
        """Stop early with *error*: cancel upstream, tell the task, settle the future."""
        if self._stopped:
            return
        self._stopped = True
        upstream, self._upstream = self._upstream, None
        if upstream is not None:
            upstream.cancel()
        self._stopping()
        self._signal()
        future = self._future
        if future is not None and not future.done():
            future.set_exception(error)
            if isinstance(error, asyncio.CancelledError):
                future.exception()  # a cancel by the owner needs no retrieval
        elif not isinstance(error, asyncio.CancelledError):
            report_error(error, f"{type(self).__name__} failed", self._loop)
