"""`LandingSink` and `TaskSink`: the shared half of the sinks that land a stream somewhere.

`LandingSink` is what every such sink has: one subscription, upstream's end recorded, and the
future `LandingSink.wait` returns, settled once with the count landed or the first failure.
`TaskSink` adds the I/O of the connector sinks, on one task. A sink subscribes, starts its task on the subscriber's loop, and that task does every await
(connect, write, publish): ``on_next`` only buffers and wakes it. Upstream's end is recorded
and the task told; the result (or the first failure) settles the future that `TaskSink.wait`
returns. A failure cancels upstream once; the task is never interrupted inside an await of the
driver (an interrupted COPY or publish leaves the driver's state behind) and stops at its next
turn instead.
"""

from __future__ import annotations

__all__ = ("LandingSink", "TaskSink")

import asyncio
from collections.abc import Generator
from typing import Any, Generic, TypeVar

import attrs

from .._core import Subscriber, Subscription, current_loop, report_error, require_not_none

T = TypeVar("T")


@attrs.define(eq=False)
class LandingSink(Subscriber[T], Generic[T]):
    """Base of `TaskSink` and ``SparkSink``; subclasses implement `_begin`, `_ended` and
    `on_next`."""

    _upstream: Subscription | None = attrs.field(default=None, init=False)
    _upstream_done: bool = attrs.field(default=False, init=False)
    _upstream_error: BaseException | None = attrs.field(default=None, init=False)
    _stopped: bool = attrs.field(default=False, init=False)
    """No more items are taken: a subscription arriving now is cancelled."""
    _loop: asyncio.AbstractEventLoop | None = attrs.field(default=None, init=False)
    _future: asyncio.Future[int] | None = attrs.field(default=None, init=False)

    def _begin(self) -> None:
        """Subscribed, on the running loop `_loop`: start landing."""
        raise NotImplementedError

    def _ended(self) -> None:
        """Upstream ended (`_upstream_error` says how)."""
        raise NotImplementedError

    def _get_future(self) -> asyncio.Future[int]:
        if self._future is None:
            self._loop = self._loop or asyncio.get_running_loop()
            self._future = self._loop.create_future()
        return self._future

    async def wait(self) -> int:
        """Wait until the stream ended and everything landed; return the count landed."""
        return await asyncio.shield(self._get_future())

    def __await__(self) -> Generator[Any, None, int]:
        return self.wait().__await__()

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
        self._get_future()
        self._begin()

    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        if self._upstream_done:
            return
        self._upstream_done = True
        self._upstream_error = error
        self._ended()

    def on_complete(self) -> None:
        if self._upstream_done:
            return
        self._upstream_done = True
        self._ended()

    def _settle(self, landed: int, error: BaseException | None) -> None:
        """Settle `wait` with *landed*, or *error*, unless it is settled already."""
        future = self._get_future()
        if future.done():
            return
        if error is None:
            future.set_result(landed)
            return
        future.set_exception(error)
        if isinstance(error, asyncio.CancelledError):
            future.exception()  # a cancel by the owner needs no retrieval


@attrs.define(eq=False)
class TaskSink(LandingSink[T], Generic[T]):
    """Base of `PostgresSink` and `JetStreamSink`; subclasses implement `_run` and `on_next`."""

    _task: asyncio.Task[None] | None = attrs.field(default=None, init=False)
    _wake: asyncio.Future[None] | None = attrs.field(default=None, init=False)

    # -- what subclasses implement ------------------------------------------------------

    async def _run(self) -> None:
        """Connect, then serve the buffer until upstream ended or `_stopped`; call `_finish`."""
        raise NotImplementedError

    def _stopping(self) -> None:
        """Called once when the sink stops early (timers to cancel)."""

    async def aclose(self) -> None:
        """Cancel, then wait until the task has closed its connection."""
        self._fail(asyncio.CancelledError())
        task = self._task
        if task is not None:
            await asyncio.wait([task])

    def _begin(self) -> None:
        assert self._loop is not None
        self._task = self._loop.create_task(self._run())

    def _ended(self) -> None:
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
        if self._future is not None:
            self._settle(landed, self._upstream_error)

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
            self._settle(0, error)
        elif not isinstance(error, asyncio.CancelledError):
            report_error(error, f"{type(self).__name__} failed", self._loop)
