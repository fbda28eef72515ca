"""The emission kit's parts: Replenisher, the drain's missed flag, _emit_from and _emit_now, and
the rule that only the trampoline touches its flags."""

from __future__ import annotations

import asyncio
import re
import threading
from collections import deque
from pathlib import Path

import attrs
import pytest

import reactive_aio
from reactive_aio import MAX_DEMAND, Flux
from reactive_aio.lowlevel import DrainSubscription, Replenisher
from reactive_aio.testing import TestSubscriber

from ._support import Recording


def test_replenisher_asks_for_the_window_then_in_batches() -> None:
    upstream = Recording()
    replenisher = Replenisher(8)
    assert replenisher.batch == 6  # three quarters
    replenisher.start(upstream)
    for _ in range(5):
        replenisher.consumed(1)
    assert upstream.requests == [8]
    replenisher.consumed(3)  # 8 consumed: one request for all of them
    assert upstream.requests == [8, 8]


def test_replenisher_with_its_own_batch_and_unbounded() -> None:
    upstream = Recording()
    halves = Replenisher(10, 5)
    halves.start(upstream)
    halves.consumed(5)
    assert upstream.requests == [10, 5]
    unbounded = Replenisher(MAX_DEMAND)
    unbounded.start(upstream)
    unbounded.consumed(10**6)
    assert upstream.requests == [10, 5, MAX_DEMAND]


def test_replenisher_cancels_once_and_then_asks_nobody() -> None:
    upstream = Recording()
    replenisher = Replenisher(4)
    replenisher.start(upstream)
    replenisher.cancel()
    replenisher.cancel()
    replenisher.consumed(4)
    assert upstream.cancels == 1
    assert upstream.requests == [4]


def test_replenisher_refuses_a_window_below_one() -> None:
    with pytest.raises(ValueError, match="prefetch must be > 0"):
        Replenisher(0)


@attrs.define(eq=False)
class _Queue(DrainSubscription[int]):
    """Emits what its producer queues; `passes` counts the drain passes."""

    queue: deque[int] = attrs.field(factory=deque, init=False)
    passes: int = attrs.field(default=0, init=False)
    on_pass: list[int] = attrs.field(factory=list, init=False)
    """Items to queue (and signal) from inside the next pass, before it emits."""

    def _emit(self, limit: int) -> int:
        self.passes += 1
        while self.on_pass:
            self.queue.append(self.on_pass.pop(0))
            self.signal()  # the drain is running: it must pass once more
        return self._emit_from(self.queue, limit)


def test_hold_lets_what_arrives_meanwhile_go_out_in_one_pass() -> None:
    ts = TestSubscriber[int](initial_request=10)
    source = _Queue(ts)
    source.start()
    passes = source.passes

    def arrive(n: int) -> None:  # a synchronous upstream answering a request
        for item in range(n):
            source.queue.append(item)
            source.signal()

    source.hold(arrive, 3)
    ts.assert_values(0, 1, 2)
    assert source.passes == passes + 1  # one pass for the three, none while held
    source.hold(arrive, 0)  # nothing arrived: one pass finds nothing


def test_a_signal_during_a_pass_makes_the_drain_pass_again() -> None:
    ts = TestSubscriber[int](initial_request=0)
    source = _Queue(ts)
    source.start()
    ts.request(10)
    passes = source.passes
    source.on_pass.append(1)
    source.signal()
    ts.assert_values(1)
    # the pass that queued the item emitted it too; a second pass looked for more
    assert source.passes == passes + 2


def test_a_pass_that_emitted_what_there_was_ends_without_another() -> None:
    ts = TestSubscriber[int](initial_request=10)
    source = _Queue(ts)
    source.start()
    passes = source.passes
    source.queue.extend([1, 2])
    source.signal()
    ts.assert_values(1, 2)
    assert source.passes == passes + 1


def test_emit_from_stops_when_on_next_cancels() -> None:
    ts = TestSubscriber[int](initial_request=10)
    ts.on_next_callback = lambda item: ts.cancel() if item == 2 else None
    source = _Queue(ts)
    source.start()
    source.queue.extend([1, 2, 3])
    source.signal()
    ts.assert_values(1, 2)
    assert source.done


def test_emit_now_takes_the_fast_path_only_when_nothing_is_pending() -> None:
    ts = TestSubscriber[int](initial_request=0)
    source = _Queue(ts)
    source.start()
    source.queue.append(1)
    assert not source._emit_now(source.queue)  # no demand: the item waits
    ts.request(1)
    ts.assert_values(1)
    ts.request(1)
    source.queue.append(2)
    passes = source.passes
    assert source._emit_now(source.queue)
    assert source.passes == passes  # no drain pass
    ts.assert_values(1, 2)
    ts.request(5)
    source.queue.extend([3, 4])
    assert not source._emit_now(source.queue)  # two queued: the drain keeps their order
    source.signal()
    ts.assert_values(1, 2, 3, 4)


async def test_a_demand_shaping_operator_sees_foreign_requests_on_its_loop() -> None:
    # do_on_request keeps request-side state (its hook): OperatorSubscriber's entry point hands
    # a request from another thread over to the loop before the hook runs.
    seen: list[int] = []
    ts = TestSubscriber[int](initial_request=0)
    Flux.range(0, 3).do_on_request(lambda _: seen.append(threading.get_ident())).subscribe(ts)
    assert ts.subscription is not None
    subscription = ts.subscription
    thread = threading.Thread(target=subscription.request, args=(3,))
    thread.start()
    await asyncio.to_thread(thread.join)
    await ts.wait_terminated()
    ts.assert_values(0, 1, 2).assert_complete()
    assert seen == [threading.get_ident()]


_TRAMPOLINE_FLAGS = re.compile(r"\._(?:missed|draining|resume_scheduled)\b")


def test_only_the_trampoline_touches_its_flags() -> None:
    # Anyone else asks through `signal`, `signal_soon`, `idle` and `_emit_now`.
    package = Path(reactive_aio.__file__).parent
    trampoline = package / "_core" / "_drain.py"
    touching = [
        str(path.relative_to(package))
        for path in sorted(package.rglob("*.py"))
        if path != trampoline and _TRAMPOLINE_FLAGS.search(path.read_text(encoding="utf-8"))
    ]
    assert not touching, f"trampoline flags used outside _core/_drain.py: {touching}"
    assert _TRAMPOLINE_FLAGS.search("self._draining = True")  # the rule sees what it forbids
