"""TailSubscriber: what the operator holds is served within demand once upstream completes."""

from __future__ import annotations

import asyncio
import threading
from collections import deque

import attrs

from reactive_aio import MAX_DEMAND, Subscription
from reactive_aio.lowlevel import TailSubscriber
from reactive_aio.testing import TestSubscriber

from ._support import through


@attrs.define(eq=False)
class _Last(TailSubscriber[int, int]):
    """take_last(2)'s shape: asks for everything, holds the last two."""

    _held: deque[int] = attrs.field(factory=lambda: deque(maxlen=2), init=False)
    dropped: int = attrs.field(default=0, init=False)

    def on_subscribe(self, subscription: Subscription) -> None:
        super().on_subscribe(subscription)
        subscription.request(MAX_DEMAND)

    def on_next(self, item: int) -> None:
        self._held.append(item)

    def on_complete(self) -> None:
        self._complete_with(self._held)

    def _drop_held(self) -> None:
        self.dropped += 1
        self._held.clear()


async def test_a_tail_subscriber_serves_what_it_holds_within_demand_after_completion() -> None:
    ts = TestSubscriber[int]()
    source = through(_Last(ts))
    ts.request(1)  # before completion: recorded
    source.next(1, 2, 3)
    ts.assert_no_values()
    source.complete()
    ts.assert_values(2).assert_not_terminated()
    ts.request(5)
    ts.assert_values(2, 3).assert_complete()


async def test_a_tail_subscriber_drops_what_it_holds_on_error_and_on_cancel() -> None:
    failed, cancelled = TestSubscriber[int](), TestSubscriber[int]()
    failing, cancelling = _Last(failed), _Last(cancelled)
    first, second = through(failing), through(cancelling)
    first.next(1)
    second.next(1)
    first.error(RuntimeError("boom"))
    cancelled.cancel()
    failed.assert_no_values().assert_error(RuntimeError, "boom")
    second.assert_cancelled()
    assert (failing.dropped, cancelling.dropped) == (1, 1)


async def test_a_request_from_another_thread_is_handed_to_the_owning_loop() -> None:
    ts = TestSubscriber[int]()
    source = through(_Last(ts))
    source.next(7)
    source.complete()
    assert ts.subscription is not None
    threads: set[int] = set()
    ts.on_next_callback = lambda _: threads.add(threading.get_ident())
    await asyncio.to_thread(ts.subscription.request, 1)
    await asyncio.sleep(0)
    ts.assert_values(7).assert_complete()
    assert threads == {threading.get_ident()}
