"""The loop boundary: where a publisher this library did not create meets its subscribers.

A publisher of another library may signal from any thread: a worker of its own, a driver's I/O
thread, a pool. The stages of this library assume that their signals arrive inside the loop
that subscribed them (timers, futures and drains are not thread-safe). `adopt` wraps such a
publisher once, where it enters the library (``Flux.from_publisher``, the publishers operators
take as arguments or get back from user functions, the sinks that accept any publisher), and
each subscriber then gets a `LoopBoundary` in front of it:

* a signal that arrives inside the owning loop while nothing waits is passed on at once; the
  whole cost is one identity check;
* any other signal (another thread, or the owning thread between two loop runs) is queued in
  arrival order, and one ``call_soon_threadsafe`` wakes the loop for however many signals
  queue up before it runs; the loop passes them on in order, at most `DRAIN_BATCH` per turn;
* a signal that arrives inside the loop while others wait joins the queue, so order holds.

Publishers of this library (`LoopBound`) signal on their subscriber's loop already and pass
through `adopt` unchanged. A subscriber that takes signals from any thread itself
(`HandsOver`: the ``on_backpressure_*`` operators, whose overflow policy acts on the
producer's thread so that what it drops never reaches the loop) is subscribed without a
boundary.

Rules the boundary keeps for the foreign publisher: a ``None`` signal raises `NullSignalError`
to its caller and ends the stream downstream with that error (rule 2.13); a second
``on_subscribe`` is cancelled (rule 2.5); a subscriber that raises while the loop passes a
queued signal on is treated as cancelled and the error reported (rule 2.13); once cancelled or
terminated the boundary drops its subscriber (rule 3.13).
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from typing import Any, Final, Generic, NoReturn, TypeVar, final

import attrs

from ._attach import attach
from ._checks import require_not_none
from ._detached import DETACHED
from ._drain import DRAIN_BATCH
from ._exceptions import NullSignalError
from ._loop import current_loop, hand_over
from ._report import raising_subscriber, report_error
from ._scan import StageScan
from ._spec import Publisher, Subscriber, Subscription

__all__ = ("ForeignPublisher", "HandsOver", "LoopBound", "LoopBoundary", "adopt")

T = TypeVar("T")

_running_loop = asyncio._get_running_loop

_SUBSCRIBE: Final = 0
_NEXT: Final = 1
_ERROR: Final = 2
_COMPLETE: Final = 3

_WAITING: Final = object()
"""What `LoopBoundary._direct` holds while signals wait: no running loop is ever this."""


class LoopBound:
    """Marks a publisher of this library: it signals each subscriber inside the loop that
    subscribed it, so `adopt` passes it through."""

    __slots__ = ()


class HandsOver:
    """Marks a subscriber of this library that takes signals from any thread itself, handing
    them to its loop: a `ForeignPublisher` subscribes it as is."""

    __slots__ = ()


def adopt(publisher: Publisher[T]) -> Publisher[T]:
    """*publisher* itself if it is `LoopBound`, otherwise wrapped in a `ForeignPublisher`.

    Anything without a ``subscribe`` method is returned as is, for the caller's own check to
    reject with a message that names the operator.
    """
    if isinstance(publisher, LoopBound) or not callable(getattr(publisher, "subscribe", None)):
        return publisher
    return ForeignPublisher(publisher)


@final
@attrs.frozen
class ForeignPublisher(Publisher[T], LoopBound, Generic[T]):
    """A publisher from elsewhere, whose every subscriber gets a `LoopBoundary`."""

    source: Publisher[T]

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        if isinstance(subscriber, HandsOver):
            self.source.subscribe(subscriber)
        else:
            self.source.subscribe(LoopBoundary(subscriber, current_loop()))

    def __repr__(self) -> str:
        return f"ForeignPublisher({self.source!r})"


@final
@attrs.define(eq=False)
class LoopBoundary(Subscriber[T], Subscription, Generic[T]):
    """Stands between a foreign publisher and one subscriber of this library (see the module
    docstring); it is also the subscription that subscriber sees."""

    _downstream: Subscriber[T]
    _loop: asyncio.AbstractEventLoop | None
    _direct: object = attrs.field(init=False)
    """The owning loop while nothing waits in the queue, `_WAITING` otherwise."""
    _queue: deque[tuple[int, Any]] = attrs.field(factory=deque, init=False)
    _lock: threading.Lock = attrs.field(factory=threading.Lock, init=False)
    _scheduled: bool = attrs.field(default=False, init=False)
    _upstream: Subscription | None = attrs.field(default=None, init=False)
    # Set as signals arrive, on the publisher's thread (its signals are serialized, rule 1.3):
    _subscribed: bool = attrs.field(default=False, init=False)
    _terminated: bool = attrs.field(default=False, init=False)

    def __attrs_post_init__(self) -> None:
        self._direct = self._loop

    # -- the foreign publisher's signals --------------------------------------------------

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "2.13", "on_subscribe's subscription")
        if self._subscribed:
            subscription.cancel()  # rule 2.5
            return
        self._subscribed = True
        self._upstream = subscription
        if _running_loop() is self._direct:
            self._subscribe_downstream()
        else:
            self._pass(_SUBSCRIBE, None)

    def on_next(self, item: T) -> None:
        if _running_loop() is self._direct and item is not None:
            self._downstream.on_next(item)
            return
        if item is None:
            self._broken(NullSignalError("rule 2.13: the publisher signalled on_next(None)"))
        if not self._terminated:
            self._pass(_NEXT, item)

    def on_error(self, error: BaseException | None) -> None:
        if error is None:
            self._broken(NullSignalError("rule 2.13: the publisher signalled on_error(None)"))
        if self._terminated:
            report_error(error, "a foreign publisher failed after it terminated", self._loop)
            return
        self._terminated = True
        if _running_loop() is self._direct:
            self._deliver(_ERROR, error)
        else:
            self._pass(_ERROR, error)

    def on_complete(self) -> None:
        if self._terminated:
            return
        self._terminated = True
        if _running_loop() is self._direct:
            self._deliver(_COMPLETE, None)
        else:
            self._pass(_COMPLETE, None)

    # -- the subscriber's calls -----------------------------------------------------------

    def request(self, n: int) -> None:
        """Pass demand on; the foreign subscription takes calls from any thread."""
        upstream = self._upstream
        if upstream is not None:
            upstream.request(n)

    def cancel(self) -> None:
        """Cancel upstream at once; drop the subscriber and what waits inside the loop."""
        upstream, self._upstream = self._upstream, None
        if upstream is not None:
            upstream.cancel()
        if not hand_over(self._loop, self._detach):
            self._detach()

    def scan_stage(self) -> StageScan:
        """The hop from a foreign publisher's thread: the signals waiting for the loop."""
        return StageScan(
            operator="loop_boundary",
            state="ended" if self._terminated else "active",
            buffered=len(self._queue),
            upstream=self._upstream,
            loop=self._loop,
        )

    # -- internals ------------------------------------------------------------------------

    @property
    def _done(self) -> bool:
        """Cancelled or terminated: the subscriber is let go (what `attach` asks)."""
        return self._downstream is DETACHED

    def _subscribe_downstream(self) -> None:
        if attach(self._downstream, self):
            self._downstream.on_subscribe(self)
        else:  # the subscriber is subscribed already (rules 1.10, 2.12): it was refused
            self.cancel()

    def _pass(self, signal: int, value: object) -> None:
        """Queue a signal for the owning loop; wake the loop unless a wake-up is pending."""
        if self._downstream is DETACHED:  # cancelled or failed: nobody is listening
            return
        loop = self._loop
        if loop is None or loop.is_closed():  # nothing to hand it to: deliver in place
            self._deliver(signal, value)
            return
        with self._lock:
            self._queue.append((signal, value))
            if self._scheduled:
                return
            self._scheduled = True
            self._direct = _WAITING
        try:
            loop.call_soon_threadsafe(self._flush)
        except RuntimeError:  # the loop closed meanwhile: nobody will run the queue
            self._flush()

    def _flush(self) -> None:
        """On the owning loop: pass queued signals on, in order, a batch per loop turn."""
        queue = self._queue
        while True:
            with self._lock:
                if not queue:
                    self._scheduled = False
                    self._direct = self._loop
                    return
                batch = [queue.popleft() for _ in range(min(len(queue), DRAIN_BATCH))]
            for signal, value in batch:
                try:
                    self._deliver(signal, value)
                except Exception as exc:
                    self._subscriber_failed(exc, signal)  # detaches: the queue is empty now
                    break
            if queue and self._loop is not None and not self._loop.is_closed():
                self._loop.call_soon(self._flush)  # let the loop breathe between batches
                return

    def _deliver(self, signal: int, value: Any) -> None:
        if signal == _NEXT:
            self._downstream.on_next(value)
        elif signal == _SUBSCRIBE:
            self._subscribe_downstream()
        elif signal == _ERROR:
            self._detach().on_error(value)
        else:
            self._detach().on_complete()

    def _detach(self) -> Subscriber[T]:
        """Drop the subscriber and whatever still waits for it; return it."""
        downstream, self._downstream = self._downstream, DETACHED
        with self._lock:
            self._queue.clear()
        return downstream

    def _broken(self, error: NullSignalError) -> NoReturn:
        """A ``None`` signal (rule 2.13): the publisher takes the subscription as cancelled,
        the subscriber gets the error, and the caller gets it raised."""
        terminated, self._terminated = self._terminated, True
        upstream, self._upstream = self._upstream, None
        if upstream is not None:
            upstream.cancel()
        if not terminated:
            if _running_loop() is self._direct:
                self._deliver(_ERROR, error)
            else:
                self._pass(_ERROR, error)
        raise error

    def _subscriber_failed(self, error: Exception, signal: int) -> None:
        what = ("on_subscribe", "on_next", "on_error", "on_complete")[signal]
        name = raising_subscriber(error, what, self._downstream)
        upstream, self._upstream = self._upstream, None
        self._detach()
        if upstream is not None:
            upstream.cancel()
        report_error(
            error, f"{name}.{what} raised; its subscription is cancelled (rule 2.13)", self._loop
        )
