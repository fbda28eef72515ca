"""Small, correct components the TCK's own tests verify: a pass-through processor and
subscribers in the whitebox and blackbox styles."""

from __future__ import annotations

from typing import Generic, TypeVar

from reactive_aio import Subscriber, Subscription
from reactive_aio.tck import WhiteboxSubscriberProbe

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
            self.probe.register_on_subscribe(_Puppet(subscription))
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


class _Puppet:
    def __init__(self, subscription: Subscription) -> None:
        self._subscription = subscription

    def trigger_request(self, n: int) -> None:
        self._subscription.request(n)

    def signal_cancel(self) -> None:
        self._subscription.cancel()
