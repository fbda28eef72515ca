"""``Flux.create``: a push source; user code emits through a thread-safe `FluxSink`.

Backpressure: special; the sink's `Overflow` policy decides what happens to items pushed
without demand (buffer up to ``max_size`` then drop oldest/latest or fail, drop, keep the
latest, or fail at once). ``await sink.send(x)`` waits for demand instead, so a producer that
uses it never overflows. Counts are exact: ``produced == delivered + dropped + buffered``.
Errors: an emitter function that raises ends the stream with its error after the buffered
items; an ``on_dropped`` callback that raises runs the ``on_cancel`` callbacks and fails the
stream likewise; an overflow under an ``"error"`` policy fails it with
`MissingBackpressureError`. ``sink.next(None)`` raises `NullSignalError` to the caller.
Loop: sink calls from other threads are handed over to the subscriber's loop in order; on such
a thread ``sink.next`` applies the overflow policy itself and hands what it keeps over in
batches, at most 1,024 items ahead of the loop (then it waits).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Generic, TypeVar, final

import attrs

from .._core import (
    DRAIN_BATCH,
    Overflow,
    OverflowDrain,
    Publisher,
    Subscriber,
    current_loop,
    hand_over,
    report_error,
    require_not_none,
)

__all__ = ("DEFAULT_OVERFLOW", "CreatePublisher", "FluxSink")

T = TypeVar("T")

DEFAULT_OVERFLOW = Overflow.BUFFER(256, then="error")
"""``Flux.create``'s default: buffer 256 undelivered items, then fail."""


@final
@attrs.frozen
class CreatePublisher(Publisher[T], Generic[T]):
    """What `Flux.create` returns; *emitter* runs once per subscriber."""

    emitter: Callable[[FluxSink[T]], object]
    overflow: Overflow = DEFAULT_OVERFLOW
    on_dropped: Callable[[Any], object] | None = None

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        drain = _CreateDrain[T](subscriber, policy=self.overflow, on_dropped=self.on_dropped)
        sink = FluxSink[T](drain)
        drain.start()
        if drain.done:
            return
        try:
            self.emitter(sink)
        except Exception as exc:  # user code fails the stream, never the subscriber
            sink.error(exc)


@final
@attrs.define(eq=False)
class FluxSink(Generic[T]):
    """The producer's handle of one subscription of `Flux.create`; every method is thread-safe."""

    _drain: _CreateDrain[T]

    def next(self, item: T) -> None:
        """Push *item*; the overflow policy applies when there is no demand.

        It does not wait, except on a thread other than the loop's while 1,024 items are
        already on their way to the loop: the policy acts on the calling thread, so items it
        drops never reach the loop, and a producer thread runs at most that many items ahead.
        """
        if item is None:
            require_not_none(item, "2.13", "the item passed to sink.next")
        self._drain.offer_threadsafe(item)

    async def send(self, item: T) -> None:
        """Push *item* once the subscriber has demand for it; returns at once if cancelled.

        It yields to the loop at least once every `DRAIN_BATCH` items, so a producer looping
        over ``send`` under unbounded demand cannot starve the loop.
        """
        if item is None:
            require_not_none(item, "2.13", "the item passed to sink.send")
        drain = self._drain
        if drain.outstanding <= 0 or drain.sends_since_yield >= DRAIN_BATCH:
            drain.sends_since_yield = 0
            await asyncio.sleep(0)
        while not drain.finished and drain.outstanding <= 0:
            waiter = asyncio.get_running_loop().create_future()
            drain.waiters.append(waiter)
            await waiter
        drain.sends_since_yield += 1
        drain.offer(item)

    def complete(self) -> None:
        """End the stream after the buffered items."""
        drain = self._drain
        if not hand_over(drain._loop, drain.finish):
            drain.finish()

    def error(self, error: BaseException) -> None:
        """Fail the stream with *error* after the buffered items; after completion or cancel
        it is reported (``reactive_aio`` logger and the loop's exception handler)."""
        require_not_none(error, "2.13", "the error passed to sink.error")
        drain = self._drain
        if not hand_over(drain._loop, drain.fail, error):
            drain.fail(error)

    def on_cancel(self, callback: Callable[[], object]) -> None:
        """Call *callback* when the subscriber cancels (or the stream fails by overflow)."""
        drain = self._drain
        if drain.cancelled:
            _run(callback, drain)
        else:
            drain.cancel_callbacks.append(callback)

    @property
    def requested(self) -> int:
        """Demand not yet covered by buffered items (``MAX_DEMAND`` when unbounded)."""
        return max(0, self._drain.outstanding)

    @property
    def cancelled(self) -> bool:
        """True once the subscriber cancelled (or the stream failed by overflow)."""
        return self._drain.cancelled

    @property
    def produced(self) -> int:
        """Items pushed while the stream was live."""
        drain = self._drain
        return drain.offered + drain.dropped_off_loop + drain.in_handoff

    @property
    def delivered(self) -> int:
        """Items handed to the subscriber."""
        return self._drain.delivered

    @property
    def dropped(self) -> int:
        """Items the overflow policy dropped."""
        drain = self._drain
        return drain.dropped + drain.dropped_off_loop

    @property
    def buffered(self) -> int:
        """Items waiting for demand (or, pushed from another thread, for the loop)."""
        drain = self._drain
        return drain.buffered + drain.in_handoff


def _run(callback: Callable[[], object], drain: _CreateDrain[Any]) -> None:
    try:
        callback()
    except Exception as exc:
        report_error(exc, "a sink.on_cancel callback raised", drain._loop)


@final
@attrs.define(eq=False)
class _CreateDrain(OverflowDrain[T]):
    cancel_callbacks: list[Callable[[], object]] = attrs.field(factory=list, init=False)
    waiters: list[asyncio.Future[None]] = attrs.field(factory=list, init=False)
    cancelled: bool = attrs.field(default=False, init=False)
    sends_since_yield: int = attrs.field(default=0, init=False)

    @property
    def outstanding(self) -> int:
        return self._requested - len(self._queue)

    def request(self, n: int) -> None:
        if current_loop() is not self._loop and hand_over(self._loop, self.request, n):
            return
        super().request(n)
        self._wake()

    def _wake(self) -> None:
        waiters = self.waiters
        if waiters:
            self.waiters = []
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_result(None)

    def _cancel_source(self) -> None:
        if self.cancelled:
            return
        self.cancelled = True
        callbacks, self.cancel_callbacks = self.cancel_callbacks, []
        for callback in callbacks:
            _run(callback, self)
        self._wake()

    def _release(self) -> None:
        super()._release()
        if not self._finished:
            self._cancel_source()
        self._wake()
