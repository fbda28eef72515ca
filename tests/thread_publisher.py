"""`ThreadPublisher`: a correct publisher of another library that signals from its own thread.

Each subscription gets a worker thread that emits the items within the demand it was given
and then completes (or fails), all from that thread, as a driver's I/O thread or a library
with its own executor does. ``on_subscribe`` comes from the subscribing thread by default, or
from the worker with ``subscribe_from_worker=True``. Requests and cancels are accepted from
any thread.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Generic, TypeVar

from reactive_aio import Subscriber, Subscription

T = TypeVar("T")

MAX_DEMAND = 2**63 - 1


class ThreadPublisher(Generic[T]):
    """Emits *items* (then *error*, if given) to each subscriber from a worker thread.

    *items* is iterated afresh for each subscriber, lazily (a ``range`` of any size will do).
    """

    def __init__(
        self,
        items: Iterable[T],
        *,
        error: BaseException | None = None,
        subscribe_from_worker: bool = False,
    ) -> None:
        self.items = items
        self.error = error
        self.subscribe_from_worker = subscribe_from_worker
        self.workers: list[threading.Thread] = []
        self._subscriptions: list[_ThreadSubscription[T]] = []
        self.signal_threads: set[int] = set()
        """Threads the signals were sent from."""

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        if subscriber is None:
            raise TypeError("rule 1.9: the subscriber must not be None")
        subscription = _ThreadSubscription(self, subscriber)
        self._subscriptions.append(subscription)
        worker = threading.Thread(target=subscription.run, daemon=True)
        self.workers.append(worker)
        if not self.subscribe_from_worker:
            self.signal_threads.add(threading.get_ident())
            subscriber.on_subscribe(subscription)
        worker.start()

    def quiet(self) -> bool:
        """True when every worker has finished or waits for demand: no signal is on its way."""
        return all(subscription.quiet() for subscription in self._subscriptions)

    def join(self, timeout: float = 10.0) -> None:
        """Wait for every worker to finish (it does once it terminated or was cancelled)."""
        for worker in self.workers:
            worker.join(timeout)


class _ThreadSubscription(Subscription, Generic[T]):
    def __init__(self, publisher: ThreadPublisher[T], subscriber: Subscriber[T]) -> None:
        self._publisher = publisher
        self._subscriber: Subscriber[T] | None = subscriber
        self._demand = 0
        self._bad_request: object = None
        self._cancelled = False
        self._waiting = False
        self._finished = False
        self._changed = threading.Condition()

    def request(self, n: int) -> None:
        with self._changed:
            if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
                self._bad_request = n
            else:
                self._demand = min(self._demand + n, MAX_DEMAND)
            self._changed.notify()

    def cancel(self) -> None:
        with self._changed:
            self._cancelled = True
            self._changed.notify()

    def quiet(self) -> bool:
        with self._changed:
            if self._finished:
                return True
            idle = not self._demand and self._bad_request is None and not self._cancelled
            return self._waiting and idle

    def run(self) -> None:
        subscriber = self._subscriber
        assert subscriber is not None
        publisher = self._publisher
        publisher.signal_threads.add(threading.get_ident())
        error: BaseException | None = None
        try:
            if publisher.subscribe_from_worker:
                subscriber.on_subscribe(self)
            for item in publisher.items:
                with self._changed:
                    self._waiting = True
                    self._changed.wait_for(
                        lambda: self._demand or self._cancelled or self._bad_request is not None
                    )
                    self._waiting = False
                    if self._cancelled:
                        return
                    if self._bad_request is not None:
                        error = ValueError(f"rule 3.9: request({self._bad_request!r})")
                        break
                    if self._demand != MAX_DEMAND:
                        self._demand -= 1
                subscriber.on_next(item)
            else:
                error = publisher.error
            with self._changed:
                if self._cancelled:
                    return
            if error is None:
                subscriber.on_complete()
            else:
                subscriber.on_error(error)
        finally:
            self._subscriber = None  # rule 3.13
            with self._changed:
                self._finished = True
