"""The one-to-one subscriber bases, each through a small operator of its own: OperatorSubscriber,
DroppingSubscriber, AskAheadSubscriber, GatedSubscriber and TailSubscriber.

Every test runs inside a loop (on asyncio and on uvloop): the bases take the loop they are
made on as their owner and hand foreign-thread calls over to it.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from typing import TypeVar

import attrs

from reactive_aio import MAX_DEMAND, Flux, Subscriber, Subscription
from reactive_aio.lowlevel import (
    AskAheadSubscriber,
    DroppingSubscriber,
    GatedSubscriber,
    OperatorSubscriber,
    TailSubscriber,
)
from reactive_aio.testing import TestPublisher, TestSubscriber

T = TypeVar("T")


@attrs.define(eq=False)
class _Double(OperatorSubscriber[int, int]):
    def on_next(self, item: int) -> None:
        if item < 0:
            self._fail(ValueError(f"negative: {item}"))
        elif item == 0:
            self._complete_early()
        else:
            self._next(item * 2)


def _through(operator: Subscriber[int]) -> TestPublisher[int]:
    source = TestPublisher[int].create()
    source.subscribe(operator)
    return source


async def test_an_operator_subscriber_passes_items_demand_and_the_end_through() -> None:
    ts = TestSubscriber[int]()
    source = _through(_Double(ts))
    ts.request(2)
    source.next(1, 2)
    source.complete()
    ts.assert_values(2, 4).assert_complete()
    assert source.requests == [2]


async def test_an_operator_subscriber_fails_and_completes_early_by_cancelling_upstream() -> None:
    failed, completed = TestSubscriber[int](), TestSubscriber[int]()
    failing, completing = _through(_Double(failed)), _through(_Double(completed))
    failed.request(5)
    completed.request(5)
    failing.next(1, -1, 3)  # the 3 arrives after the failure: it goes nowhere
    completing.next(0)
    failed.assert_values(2).assert_error(ValueError, "negative: -1")
    completed.assert_no_values().assert_complete()
    failing.assert_cancelled()
    completing.assert_cancelled()


async def test_a_cancelled_operator_subscriber_forgets_its_downstream() -> None:
    ts = TestSubscriber[int]()
    operator = _Double(ts)
    source = _through(operator)
    ts.request(1)
    ts.cancel()
    source.next(1)  # in flight after the cancel (rule 2.8)
    ts.assert_no_values().assert_not_terminated()
    source.assert_cancelled()
    assert operator._downstream is not ts  # rule 3.13


@attrs.define(eq=False)
class _Odd(DroppingSubscriber[int, int]):
    def on_next(self, item: int) -> None:
        if item % 2:
            self._next(item)
        else:
            self._drop()


async def test_a_dropping_subscriber_asks_for_one_item_per_drop_until_demand_is_unbounded() -> None:
    ts = TestSubscriber[int]()
    source = _through(_Odd(ts))
    ts.request(2)
    source.next(2, 1, 4, 3)
    ts.assert_values(1, 3)
    assert source.requests == [2, 1, 1]
    ts.request(MAX_DEMAND)
    source.next(6, 5)
    ts.assert_values(1, 3, 5)
    assert source.requests == [2, 1, 1, MAX_DEMAND]  # unbounded: no replacements


@attrs.define(eq=False)
class _HoldBack(AskAheadSubscriber[int]):
    """Holds the last *ahead* items back (skip_last's shape)."""

    _held: deque[int] = attrs.field(factory=deque, init=False)

    def on_next(self, item: int) -> None:
        self._held.append(item)
        if len(self._held) > 2:
            self._next(self._held.popleft())


async def test_an_ask_ahead_subscriber_raises_the_first_request_only() -> None:
    ts = TestSubscriber[int]()
    source = _through(_HoldBack(ts, ahead=2))
    ts.request(1)
    source.next(1, 2, 3)
    ts.request(1)
    source.next(4)
    source.complete()
    ts.assert_values(1, 2).assert_complete()
    assert source.requests == [3, 1]


async def test_an_ask_ahead_subscriber_saturates_and_leaves_bad_requests_to_the_rules() -> None:
    saturated, bad = TestSubscriber[int](), TestSubscriber[int]()
    unbounded = _through(_HoldBack(saturated, ahead=2))
    failing = _through(_HoldBack(bad, ahead=2))
    saturated.request(MAX_DEMAND)
    bad.request(0)
    assert unbounded.requests == [MAX_DEMAND]
    assert failing.requests == [0]  # passed on unchanged: the source fails it (rule 3.9)


@attrs.define(eq=False)
class _Until(GatedSubscriber[T]):
    """take_until's shape: the other publisher's first item completes the stream."""

    def on_next(self, item: T) -> None:
        self._next(item)

    def other_emitted(self) -> None:
        self._complete_early()


async def test_a_gated_subscriber_watches_the_other_publisher_before_downstream_asks() -> None:
    other = TestPublisher[str].create()
    ts = TestSubscriber[int]()
    source = _through(_Until(ts, other=other))
    assert other.requests == [1]  # asked before downstream got on_subscribe
    ts.request(5)
    source.next(1, 2)
    other.next("stop")
    ts.assert_values(1, 2).assert_complete()
    source.assert_cancelled()
    other.assert_cancelled()


async def test_a_gated_subscriber_fails_with_the_other_publisher_and_stops_watching() -> None:
    other = TestPublisher[str].create()
    failed = TestSubscriber[int](initial_request=5)
    failing = _through(_Until(failed, other=other))
    other.error(RuntimeError("other failed"))
    failed.assert_error(RuntimeError, "other failed")
    failing.assert_cancelled()

    watched = TestPublisher[str].create()
    ts = TestSubscriber[int](initial_request=5)
    source = _through(_Until(ts, other=watched))
    source.complete()  # the stream ended on its own: the other publisher is cancelled
    ts.assert_complete()
    watched.assert_cancelled()


async def test_a_gated_subscriber_whose_other_emits_at_once_completes_without_items() -> None:
    ts = TestSubscriber[int](initial_request=5)
    source = _through(_Until(ts, other=Flux.just("now")))
    ts.assert_no_values().assert_complete()
    source.assert_cancelled()


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
    source = _through(_Last(ts))
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
    first, second = _through(failing), _through(cancelling)
    first.next(1)
    second.next(1)
    first.error(RuntimeError("boom"))
    cancelled.cancel()
    failed.assert_no_values().assert_error(RuntimeError, "boom")
    second.assert_cancelled()
    assert (failing.dropped, cancelling.dropped) == (1, 1)


async def test_a_request_from_another_thread_is_handed_to_the_owning_loop() -> None:
    ts = TestSubscriber[int]()
    source = _through(_Last(ts))
    source.next(7)
    source.complete()
    assert ts.subscription is not None
    threads: set[int] = set()
    ts.on_next_callback = lambda _: threads.add(threading.get_ident())
    await asyncio.to_thread(ts.subscription.request, 1)
    await asyncio.sleep(0)
    ts.assert_values(7).assert_complete()
    assert threads == {threading.get_ident()}
