"""`BufferDrain`, the one buffered emission, in each of its configurations."""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any

import attrs

from reactive_aio import MAX_DEMAND, MissingBackpressureError, Subscription
from reactive_aio.lowlevel import BufferDrain
from reactive_aio.testing import TestSubscriber

from ._support import Recording


def test_a_producer_pushes_and_the_terminal_signal_waits_behind_the_items() -> None:
    ts = TestSubscriber[int]()
    drain = BufferDrain[int](ts)
    drain.start()
    for i in range(3):
        drain.push(i)
    drain.fail(ValueError("late"))
    assert drain.buffered == 3
    assert drain.finished
    ts.assert_no_values().assert_not_terminated()
    ts.request(2)
    ts.assert_values(0, 1).assert_not_terminated()
    ts.request(1)
    ts.assert_values(0, 1, 2).assert_error(ValueError)
    assert drain.delivered == 3


def test_a_push_beyond_the_capacity_drops_the_held_items_and_fails_at_once() -> None:
    ts = TestSubscriber[int]()
    released: list[bool] = []
    drain = BufferDrain[int](
        ts, capacity=2, what="ticker", on_release=lambda: released.append(True)
    )
    drain.start()
    drain.push(1)
    drain.push(2)
    drain.push(3)
    ts.assert_no_values().assert_error(MissingBackpressureError)
    assert "ticker" in str(ts.errors[0])
    assert drain.buffered == 0
    assert released == [True]


def test_with_a_prefetch_window_it_asks_upstream_and_replenishes_as_it_delivers() -> None:
    ts = TestSubscriber[int](initial_request=MAX_DEMAND)
    drain = BufferDrain[int](ts, prefetch=4, replenish=2)
    drain.start()
    upstream = Recording()
    drain.on_subscribe(upstream)
    assert upstream.requests == [4]
    second = Recording()
    drain.on_subscribe(second)
    assert second.cancels == 1  # rule 2.5
    for i in range(4):
        drain.on_next(i)
    assert upstream.requests == [4, 2, 2]
    drain.on_complete()
    ts.assert_values(0, 1, 2, 3).assert_complete()
    assert upstream.cancels == 0


def test_an_upstream_that_overflows_the_window_is_cancelled_and_fails_the_stream() -> None:
    ts = TestSubscriber[int]()
    drain = BufferDrain[int](ts, prefetch=2)
    drain.start()
    upstream = Recording()
    drain.on_subscribe(upstream)
    for i in range(3):
        drain.on_next(i)
    assert upstream.cancels == 1
    ts.request(5)
    ts.assert_values(0, 1).assert_error(MissingBackpressureError)


def test_cancelling_downstream_cancels_a_live_upstream_once() -> None:
    ts = TestSubscriber[int]()
    drain = BufferDrain[int](ts, prefetch=8)
    drain.start()
    upstream = Recording()
    drain.on_subscribe(upstream)
    ts.cancel()
    ts.cancel()
    assert upstream.cancels == 1
    drain.on_next(1)  # ignored: nobody is listening
    ts.assert_no_values()


def test_a_buffer_made_before_its_subscriber_holds_items_and_the_end() -> None:
    drain = BufferDrain[int](None, prefetch=4)
    drain.on_subscribe(Recording())
    drain.on_next(7)
    drain.on_complete()
    ts = TestSubscriber[int](initial_request=1)
    drain.serve(ts)
    ts.assert_values(7).assert_complete()


async def test_asynchronous_emits_from_one_loop_callback_per_batch() -> None:
    ts = TestSubscriber[int](initial_request=MAX_DEMAND)
    drain = BufferDrain[int](ts, asynchronous=True)
    drain.start()
    for i in range(5):
        drain.push(i)
    ts.assert_no_values()  # never on the producer's stack
    await asyncio.sleep(0)
    ts.assert_values(*range(5))


@attrs.define(eq=False)
class _Hooked(BufferDrain[int]):
    """A time operator's shape: it starts on subscribe and forwards doubled demand."""

    calls: list[Any] = attrs.field(factory=list, init=False)

    def on_next(self, item: str) -> None:  # upstream items are not what it emits
        self.push(len(item))

    def _subscribed(self, upstream: Subscription) -> None:
        self.calls.append("subscribed")
        self.start()

    def _requested_more(self, n: int) -> None:
        self.calls.append(("requested", n))
        upstream = self._upstream
        if upstream is not None:
            upstream.request(2 * n)

    def _ending(self, error: BaseException | None) -> None:
        self.calls.append(("ending", error))
        self.push(-1)
        self.finish(error)

    def _release(self) -> None:
        self.calls.append("released")
        super()._release()


def test_the_hooks_of_a_subclass_on_its_upstream_side() -> None:
    ts = TestSubscriber[int](initial_request=3)
    hooked = _Hooked(ts)
    upstream = Recording()
    hooked.on_subscribe(upstream)
    assert upstream.requests == [6]  # the demand asked inside on_subscribe, forwarded
    hooked.on_next("ab")
    hooked.on_complete()
    hooked.on_error(ValueError("after the end"))  # reported, not signalled
    ts.assert_values(2, -1).assert_complete()
    assert hooked.calls == ["subscribed", ("requested", 3), ("ending", None), "released"]
    assert upstream.cancels == 0  # it had terminated


def test_a_drain_with_a_context_runs_every_pass_inside_it() -> None:
    var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="outside")
    context = contextvars.copy_context()
    context.run(var.set, "subscriber's")
    seen: list[str] = []

    def record_and_ask_again(_: int) -> None:
        seen.append(var.get())
        if len(seen) > 1:
            ts.request(1)  # from inside on_next: the running pass goes on, still inside

    ts = TestSubscriber[int](on_next_callback=record_and_ask_again)
    drain = BufferDrain[int](ts, context=context)
    drain.start()
    drain.push(1)
    ts.request(1)  # a pass set off from outside the context
    drain.push(2)
    ts.request(1)
    drain.push(3)
    ts.assert_values(1, 2, 3)
    assert seen == ["subscriber's"] * 3
    assert var.get() == "outside"
