"""A small publisher with switchable flaws: each flaw breaks one behaviour of the spec.

Without a flaw it is correct (and independent of reactive_aio's core, like a third-party
publisher): it trampolines, respects demand, yields to the loop every batch, drops the
subscriber when cancelled or terminated, and reports ``request(n <= 0)`` via ``on_error``.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Literal

from reactive_aio import MAX_DEMAND, Publisher, Subscriber, Subscription

Flaw = Literal[
    "none",
    "ignores_demand",
    "no_trampoline",
    "keeps_subscriber",
    "throws_on_bad_request",
    "emits_after_completion",
    "two_threads",
]
BATCH = 256


class FlawedPublisher(Publisher[int]):
    """``0 … count - 1``, with one *flaw*."""

    def __init__(self, count: int, flaw: Flaw = "none") -> None:
        self.count = count
        self.flaw = flaw
        self.registry: list[Subscriber[int]] = []

    def subscribe(self, subscriber: Subscriber[int]) -> None:
        if subscriber is None:
            raise TypeError("rule 1.9: subscribe(None)")
        if self.flaw == "keeps_subscriber":
            self.registry.append(subscriber)  # the flaw: never removed on cancel (3.13)
        _FlawedSubscription(self, subscriber).start()


class _FlawedSubscription(Subscription):
    def __init__(self, publisher: FlawedPublisher, subscriber: Subscriber[int]) -> None:
        self.flaw = publisher.flaw
        self.count = publisher.count
        self.subscriber: Subscriber[int] | None = subscriber
        self.kept: Subscriber[int] | None = None
        self.requested = False
        self.index = 0
        self.demand = 0
        self.done = False
        self.completed = False
        self.draining = False
        self.loop = asyncio.get_running_loop()
        self.thread = threading.get_ident()

    def start(self) -> None:
        assert self.subscriber is not None
        self.draining = True
        try:
            self.subscriber.on_subscribe(self)
        finally:
            self.draining = False
        self.drain()

    def request(self, n: int) -> None:
        if threading.get_ident() != self.thread:
            self.loop.call_soon_threadsafe(self.request, n)
            return
        if self.completed and self.flaw == "emits_after_completion" and self.kept is not None:
            self.kept.on_next(-1)
            return
        if self.done:
            return
        if n <= 0:
            if self.flaw == "throws_on_bad_request":
                raise ValueError(f"rule 3.9: request({n})")
            self.finish(ValueError(f"rule 3.9: non-positive subscription request {n}"))
            return
        self.demand = min(self.demand + n, MAX_DEMAND)
        self.requested = True
        if self.flaw == "no_trampoline":
            self.emit_recursively()
        elif self.flaw == "two_threads":
            self.emit_from_two_threads()
        else:
            self.drain()

    def cancel(self) -> None:
        if threading.get_ident() != self.thread:
            self.loop.call_soon_threadsafe(self.cancel)
            return
        self.done = True
        self.subscriber = None

    def finish(self, error: BaseException | None) -> None:
        subscriber, self.subscriber = self.subscriber, None
        self.done = True
        if subscriber is None:
            return
        if self.flaw == "emits_after_completion":
            self.kept = subscriber
        if error is None:
            self.completed = True
            subscriber.on_complete()
        else:
            subscriber.on_error(error)

    def drain(self) -> None:
        if self.draining:
            return
        self.draining = True
        try:
            emitted = 0
            while not self.done and self.index < self.count:
                if self.demand <= 0 and not (self.flaw == "ignores_demand" and self.requested):
                    break  # the flaw: after a first request, the amount is ignored
                if emitted >= BATCH:
                    self.loop.call_soon(self.drain)
                    return
                self.emit_one()
                emitted += 1
            if not self.done and self.index >= self.count:
                self.finish(None)
        finally:
            self.draining = False

    def emit_one(self) -> None:
        subscriber = self.subscriber
        assert subscriber is not None
        value = self.index
        self.index += 1
        if self.demand != MAX_DEMAND:
            self.demand -= 1
        try:
            subscriber.on_next(value)
        except Exception as exc:  # rule 2.13: the subscription is cancelled, the error reported
            self.cancel()
            self.loop.call_exception_handler({"message": "on_next raised", "exception": exc})

    def emit_recursively(self) -> None:
        # The flaw: every request emits right here, so on_next → request → on_next nests.
        while not self.done and self.demand > 0 and self.index < self.count:
            self.emit_one()
        if not self.done and self.index >= self.count:
            self.finish(None)

    def emit_from_two_threads(self) -> None:
        # The flaw: the requested elements are emitted by two threads at once.
        take = min(self.demand, self.count - self.index, 1000)
        if take <= 0:
            if not self.done and self.index >= self.count:
                self.finish(None)
            return
        self.demand -= take
        values = list(range(self.index, self.index + take))
        self.index += take
        subscriber = self.subscriber
        assert subscriber is not None
        barrier = threading.Barrier(2)

        def run(part: list[int]) -> None:
            barrier.wait()
            for value in part:
                subscriber.on_next(value)

        threads = [threading.Thread(target=run, args=(values[i::2],)) for i in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if not self.done and self.index >= self.count:
            self.finish(None)
