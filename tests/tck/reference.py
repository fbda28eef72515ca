"""Small, correct components the TCK's own tests verify: a pass-through processor and
subscribers in the whitebox and blackbox styles."""

from __future__ import annotations

from typing import Generic, TypeVar

from reactive_aio import Subscriber, Subscription
from reactive_aio.tck import SubscriptionPuppet, WhiteboxSubscriberProbe

T = TypeVar("T")


class PassThroughProcessor(Subscriber[T], Generic[T]):
    """A unicast identity processor: downstream demand goes upstream unchanged.

    Also a `Publisher[T]`; one subscriber at a time. Upstream errors and completion that
    arrive before the subscriber are replayed to it.
    """

    def __init__(self) -> None:
        self._upstream: Subscription | None = None
        self._downstream: Subscriber[T] | None = None
        self._pending: list[int] = []
        self._cancelled = False
        self._terminal: tuple[BaseException | None] | None = None

    # -- Subscriber (upstream side) --------------------------------------------------------

    def on_subscribe(self, subscription: Subscription) -> None:
        if subscription is None:
            raise TypeError("rule 2.13: on_subscribe(None)")
        if self._upstream is not None:
            subscription.cancel()  # rule 2.5
            return
        self._upstream = subscription
        if self._cancelled:
            subscription.cancel()
        else:
            pending, self._pending = self._pending, []
            for n in pending:  # replayed one by one, so request(0) still reaches upstream
                subscription.request(n)

    def on_next(self, item: T) -> None:
        if item is None:
            raise TypeError("rule 2.13: on_next(None)")
        if self._downstream is not None:
            self._downstream.on_next(item)

    def on_error(self, error: BaseException) -> None:
        if error is None:
            raise TypeError("rule 2.13: on_error(None)")
        self._finish(error)

    def on_complete(self) -> None:
        self._finish(None)

    def _finish(self, error: BaseException | None) -> None:
        downstream, self._downstream = self._downstream, None
        if downstream is None:
            self._terminal = (error,)
        elif error is None:
            downstream.on_complete()
        else:
            downstream.on_error(error)

    # -- Publisher (downstream side) -------------------------------------------------------

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        if subscriber is None:
            raise TypeError("rule 1.9: subscribe(None)")
        subscriber.on_subscribe(_PassThroughSubscription(self))
        if self._terminal is not None:
            (error,) = self._terminal
            if error is None:
                subscriber.on_complete()
            else:
                subscriber.on_error(error)
        elif not self._cancelled:
            self._downstream = subscriber

    def _request(self, n: int) -> None:
        if self._upstream is None:
            self._pending.append(n)
        else:
            self._upstream.request(n)

    def _cancel(self) -> None:
        self._cancelled = True
        self._downstream = None
        if self._upstream is not None:
            self._upstream.cancel()


class _PassThroughSubscription(Subscription):
    def __init__(self, processor: PassThroughProcessor[T]) -> None:
        self._processor: PassThroughProcessor[T] | None = processor

    def request(self, n: int) -> None:
        if self._processor is not None:
            self._processor._request(n)

    def cancel(self) -> None:
        processor, self._processor = self._processor, None
        if processor is not None:
            processor._cancel()


class RequestingSubscriber(Subscriber[T], Generic[T]):
    """Requests one at a time; cancels a second subscription; rejects None."""

    def __init__(self, probe: WhiteboxSubscriberProbe[T] | None = None) -> None:
        self.probe = probe
        self.subscription: Subscription | None = None
        self.done = False

    def on_subscribe(self, subscription: Subscription) -> None:
        if subscription is None:
            raise TypeError("rule 2.13: on_subscribe(None)")
        if self.subscription is not None:
            subscription.cancel()
            return
        self.subscription = subscription
        if self.probe is not None:
            self.probe.register_on_subscribe(SubscriptionPuppet(subscription))
        else:
            subscription.request(1)

    def on_next(self, item: T) -> None:
        if item is None:
            raise TypeError("rule 2.13: on_next(None)")
        if self.probe is not None:
            self.probe.register_on_next(item)
        elif self.subscription is not None and not self.done:
            self.subscription.request(1)

    def on_error(self, error: BaseException) -> None:
        if error is None:
            raise TypeError("rule 2.13: on_error(None)")
        self.done = True
        if self.probe is not None:
            self.probe.register_on_error(error)

    def on_complete(self) -> None:
        self.done = True
        if self.probe is not None:
            self.probe.register_on_complete()


class LockstepProcessor(Subscriber[T], Generic[T]):
    """A multicast identity processor that emits in lockstep (coordinated emission).

    It prefetches *buffer_size* items and re-requests in halves; an item goes out only when
    every current subscriber has demand. The last subscriber to cancel cancels upstream.
    Upstream errors pass on at once; completion after the buffered items.
    """

    def __init__(self, buffer_size: int) -> None:
        self._size = max(buffer_size, 2)
        self._upstream: Subscription | None = None
        self._queue: list[T] = []
        self._subscribers: list[_LockstepSubscription[T]] = []
        self._done = False
        self._error: BaseException | None = None
        self._consumed = 0
        self._draining = False
        self._missed = False

    # -- upstream side ------------------------------------------------------------------

    def on_subscribe(self, subscription: Subscription) -> None:
        if subscription is None:
            raise TypeError("rule 2.13: on_subscribe(None)")
        if self._upstream is not None or self._done:
            subscription.cancel()  # rule 2.5
            return
        self._upstream = subscription
        subscription.request(self._size)

    def on_next(self, item: T) -> None:
        if item is None:
            raise TypeError("rule 2.13: on_next(None)")
        self._queue.append(item)
        self._drain()

    def on_error(self, error: BaseException) -> None:
        if error is None:
            raise TypeError("rule 2.13: on_error(None)")
        self._error = error
        self._done = True
        self._queue.clear()  # errors pass on at once
        self._drain()

    def on_complete(self) -> None:
        self._done = True
        self._drain()

    # -- downstream side ----------------------------------------------------------------

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        if subscriber is None:
            raise TypeError("rule 1.9: subscribe(None)")
        subscription = _LockstepSubscription(self, subscriber)
        subscriber.on_subscribe(subscription)  # before it becomes visible to the drain
        if not subscription.cancelled:
            self._subscribers.append(subscription)
        self._drain()

    def _drain(self) -> None:
        if self._draining:
            self._missed = True
            return
        self._draining = True
        try:
            while True:
                self._missed = False
                self._emit_ready()
                if not self._missed:
                    return
        finally:
            self._draining = False

    def _emit_ready(self) -> None:
        subscribers = self._subscribers
        while self._queue and subscribers and all(s.demand > 0 for s in subscribers):
            item = self._queue.pop(0)
            for s in list(subscribers):
                s.demand -= 1
                if s.subscriber is not None:  # None: cancelled by an earlier on_next
                    s.subscriber.on_next(item)
            self._consumed += 1
            if self._consumed >= self._size // 2 and self._upstream is not None:
                self._upstream.request(self._consumed)
                self._consumed = 0
        if self._done and not self._queue:
            for s in list(subscribers):
                subscriber = self._remove(s)
                if subscriber is None:
                    continue
                if self._error is None:
                    subscriber.on_complete()
                else:
                    subscriber.on_error(self._error)

    def _remove(self, subscription: _LockstepSubscription[T]) -> Subscriber[T] | None:
        """Forget *subscription* and let go of its subscriber (rule 3.13); return it."""
        subscription.cancelled = True
        if subscription in self._subscribers:
            self._subscribers.remove(subscription)
        subscriber, subscription.subscriber = subscription.subscriber, None
        return subscriber

    def _cancelled(self, subscription: _LockstepSubscription[T]) -> None:
        self._remove(subscription)
        if not self._subscribers and not self._done and self._upstream is not None:
            self._upstream.cancel()  # the last one out cancels upstream (reference counting)
            self._done = True
            self._queue.clear()
        self._drain()


class _LockstepSubscription(Subscription, Generic[T]):
    def __init__(self, processor: LockstepProcessor[T], subscriber: Subscriber[T]) -> None:
        self.processor = processor
        self.subscriber: Subscriber[T] | None = subscriber
        self.demand = 0
        self.cancelled = False

    def request(self, n: int) -> None:
        if self.cancelled:
            return
        if n <= 0:
            subscriber = self.processor._remove(self)
            if subscriber is not None:
                subscriber.on_error(ValueError(f"rule 3.9: non-positive subscription request {n}"))
            return
        self.demand = min(self.demand + n, 2**63 - 1)
        self.processor._drain()

    def cancel(self) -> None:
        if not self.cancelled:
            self.processor._cancelled(self)
