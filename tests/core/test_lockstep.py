"""`LockstepDrain`: the smallest demand over the subscribers, in batches, each in its context."""

from __future__ import annotations

import contextvars

import attrs

from reactive_aio import MAX_DEMAND, Subscription
from reactive_aio._core import LockstepDrain
from reactive_aio.testing import TestSubscriber

VAR: contextvars.ContextVar[str] = contextvars.ContextVar("VAR", default="none")


def _drain(capacity: int = 16) -> tuple[LockstepDrain[int], list[int], list[str]]:
    consumed: list[int] = []
    abandoned: list[str] = []
    drain = LockstepDrain[int](
        capacity=capacity,
        on_consumed=consumed.append,
        on_abandoned=lambda: abandoned.append("abandoned"),
    )
    return drain, consumed, abandoned


def test_a_batch_is_the_smallest_demand_and_goes_subscriber_by_subscriber() -> None:
    drain, consumed, _ = _drain()
    order: list[tuple[str, int]] = []
    fast = TestSubscriber[int](initial_request=MAX_DEMAND)
    slow = TestSubscriber[int](initial_request=2)
    drain.subscribe(fast)
    drain.subscribe(slow)
    fast.on_next_callback = lambda x: order.append(("fast", x))
    slow.on_next_callback = lambda x: order.append(("slow", x))
    for i in range(5):
        assert drain.push(i)
    assert order == [("fast", 0), ("slow", 0), ("fast", 1), ("slow", 1)]  # one at a time
    order.clear()
    slow.request(3)  # queued items: one batch of three, subscriber by subscriber
    assert order == [("fast", 2), ("fast", 3), ("fast", 4), ("slow", 2), ("slow", 3), ("slow", 4)]
    assert consumed == [1, 1, 3]
    assert drain.buffered == 0
    assert drain.emitted == 5


def test_push_refuses_an_item_beyond_the_capacity() -> None:
    drain, _, _ = _drain(capacity=2)
    drain.subscribe(TestSubscriber[int]())
    assert drain.push(1)
    assert drain.push(2)
    assert not drain.push(3)
    assert drain.buffered == 2


@attrs.define(eq=False)
class _Recorder:
    """Records every signal with the value of VAR it was received with."""

    demand: int
    signals: list[tuple[str, str]] = attrs.field(factory=list)
    subscription: Subscription | None = None

    def on_subscribe(self, subscription: Subscription) -> None:
        self.subscription = subscription
        if self.demand:
            subscription.request(self.demand)

    def on_next(self, item: int) -> None:
        self.signals.append((f"next {item}", VAR.get()))

    def on_error(self, error: BaseException) -> None:
        self.signals.append(("error", VAR.get()))

    def on_complete(self) -> None:
        self.signals.append(("complete", VAR.get()))


def test_every_subscriber_gets_its_signals_in_the_context_it_subscribed_in() -> None:
    drain, _, _ = _drain()
    a, b = _Recorder(demand=0), _Recorder(demand=MAX_DEMAND)
    for name, recorder in (("a", a), ("b", b)):
        context = contextvars.copy_context()
        context.run(VAR.set, name)
        context.run(drain.subscribe, recorder)
    drain.push(0)  # not ready: a has no demand
    assert a.subscription is not None
    a.subscription.request(2)  # a batch, set off outside both contexts
    drain.push(1)  # the one-item path
    drain.finish(None)
    assert a.signals == [("next 0", "a"), ("next 1", "a"), ("complete", "a")]
    assert b.signals == [("next 0", "b"), ("next 1", "b"), ("complete", "b")]
    assert drain.terminated
    assert VAR.get() == "none"


def test_a_late_subscriber_joins_with_its_own_demand_and_after_the_end_gets_it() -> None:
    drain, _, abandoned = _drain()
    first = TestSubscriber[int](initial_request=1)
    drain.subscribe(first)
    drain.push(0)
    late = TestSubscriber[int](initial_request=1)
    drain.subscribe(late)
    drain.push(1)
    first.request(1)
    first.assert_values(0, 1)
    late.assert_values(1)
    first.cancel()
    late.cancel()
    assert abandoned == ["abandoned"]
    assert drain.subscriber_count == 0
    drain.finish(ValueError("over"))
    after = TestSubscriber[int]()
    drain.subscribe(after)
    after.assert_error(ValueError)


def test_a_raising_subscriber_is_dropped_and_the_others_go_on() -> None:
    drain, _, _ = _drain()
    ok = TestSubscriber[int](initial_request=MAX_DEMAND)
    bad = TestSubscriber[int](initial_request=MAX_DEMAND)

    def boom(_: int) -> None:
        raise RuntimeError("boom")

    bad.on_next_callback = boom
    drain.subscribe(bad)
    drain.subscribe(ok)
    drain.push(1)
    drain.push(2)
    ok.assert_values(1, 2)
    assert drain.subscriber_count == 1


def test_a_subscriber_that_joins_during_the_last_batch_gets_the_terminal_signal() -> None:
    drain, _, _ = _drain()
    late = TestSubscriber[int]()
    first = TestSubscriber[int](on_next_callback=lambda _: drain.subscribe(late))
    drain.subscribe(first)
    drain.push(0)
    drain.finish(None)  # behind the queued item
    first.request(1)
    first.assert_values(0).assert_complete()
    late.assert_no_values().assert_complete()
