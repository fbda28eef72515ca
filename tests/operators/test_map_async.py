"""map_async: async callables with bounded concurrency, ordered or not."""

from __future__ import annotations

import asyncio

import pytest

from reactive_aio import MAX_DEMAND, Flux, NullSignalError
from reactive_aio._operators._map_async import PREFETCH
from reactive_aio.testing import TestSubscriber

from ._transform_support import Probe, eventually


async def _double(x: int) -> int:
    await asyncio.sleep(0)
    return 2 * x


async def test_map_async_waits_for_demand() -> None:
    probe = Probe(5)
    ts = TestSubscriber[int]()
    Flux.from_publisher(probe).map_async(_double).subscribe(ts)
    assert probe.requests == [PREFETCH]  # a window ahead, whatever the concurrency
    await asyncio.sleep(0)  # give a (wrongly) eager operator the chance to emit
    ts.assert_no_values()
    ts.request(1)
    await ts.wait_for_values(1)
    ts.assert_values(0)
    ts.request(10)
    await ts.wait_terminated()
    ts.assert_values(0, 2, 4, 6, 8).assert_complete()


async def test_map_async_bounds_calls_in_flight_and_keeps_order() -> None:
    running = 0
    peak = 0
    gates = {i: asyncio.Event() for i in range(6)}

    started: set[int] = set()

    async def slow(x: int) -> int:
        nonlocal running, peak
        started.add(x)
        running += 1
        peak = max(peak, running)
        await gates[x].wait()
        running -= 1
        return x

    ts = TestSubscriber[int](initial_request=100)
    Flux.range(0, 6).map_async(slow, concurrency=3).subscribe(ts)
    await eventually(lambda: running == 3)
    assert started == {0, 1, 2}
    gates[2].set()
    gates[1].set()
    # the workers move on to 3 and 4: a result waiting for an earlier one holds no worker
    await eventually(lambda: started == {0, 1, 2, 3, 4})
    assert running == 3
    ts.assert_no_values()  # 0 still runs, and order is kept
    gates[0].set()
    await ts.wait_for_values(3)
    await eventually(lambda: started == set(range(6)))
    for gate in gates.values():
        gate.set()
    await ts.wait_terminated()
    ts.assert_values(0, 1, 2, 3, 4, 5).assert_complete()
    assert peak == 3


async def test_map_async_unordered_emits_as_ready() -> None:
    gates = {i: asyncio.Event() for i in range(2)}

    async def slow(x: int) -> int:
        await gates[x].wait()
        return x

    ts = TestSubscriber[int](initial_request=10)
    Flux.range(0, 2).map_async(slow, concurrency=2, ordered=False).subscribe(ts)
    gates[1].set()
    await ts.wait_for_values(1)
    ts.assert_values(1)
    gates[0].set()
    await ts.wait_terminated()
    ts.assert_values(1, 0).assert_complete()


async def test_map_async_cancel_cancels_upstream_and_running_calls() -> None:
    started = asyncio.Event()
    cancelled = asyncio.Event()

    async def hang(x: int) -> int:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return x

    probe = Probe(PREFETCH + 10)  # still running when the stream stops
    ts = TestSubscriber[int](initial_request=5)
    Flux.from_publisher(probe).map_async(hang).subscribe(ts)
    await started.wait()
    ts.cancel()
    await cancelled.wait()
    assert probe.cancels == 1
    ts.assert_not_terminated()
    # over a source at hand: the task awaiting the calls within demand
    started.clear()
    cancelled.clear()
    ts = TestSubscriber[int](initial_request=5)
    Flux.range(0, 10).map_async(hang).subscribe(ts)
    await started.wait()
    ts.cancel()
    await cancelled.wait()
    ts.assert_not_terminated()
    # a fold awaits the calls in the awaiting task: cancelling that task cancels the call
    started.clear()
    cancelled.clear()
    task = asyncio.ensure_future(Flux.range(0, 10).map_async(hang).to_list())
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cancelled.is_set()


async def test_map_async_raising_fn_cancels_upstream_then_errors() -> None:
    async def fail_on_2(x: int) -> int:
        if x == 2:
            raise ValueError("bad item 2")
        return x

    probe = Probe(PREFETCH + 10)  # still running when the stream stops
    ts = TestSubscriber[int](initial_request=10)
    Flux.from_publisher(probe).map_async(fail_on_2).subscribe(ts)
    await ts.wait_terminated()
    ts.assert_values(0, 1).assert_error(ValueError, match="bad item 2")
    assert probe.cancels == 1


async def test_map_async_none_result_and_upstream_error() -> None:
    async def nothing(x: int) -> None:
        return None

    ts = TestSubscriber[int](initial_request=10)
    Flux.range(0, 3).map_async(nothing).subscribe(ts)  # type: ignore[arg-type]
    await ts.wait_terminated()
    ts.assert_error(NullSignalError, match="returned None")
    failed = TestSubscriber[int](initial_request=10)
    Flux.from_publisher(Probe(2, OSError("x"))).map_async(_double, concurrency=4).subscribe(failed)
    await failed.wait_terminated()
    failed.assert_error(OSError)


async def test_map_async_long_stream_and_bad_arguments() -> None:
    assert await Flux.range(0, 3000).map_async(_double).take(3).to_list() == [0, 2, 4]
    result = await Flux.range(0, 3000).map_async(_double, concurrency=8).to_list()
    assert result == [2 * x for x in range(3000)]
    with pytest.raises(ValueError, match="> 0"):
        Flux.range(0, 1).map_async(_double, concurrency=0)


def test_map_async_without_loop_fails() -> None:
    ts = TestSubscriber[int](initial_request=1)
    Flux.range(0, 1).map_async(_double).subscribe(ts)
    ts.assert_error(RuntimeError, match="running event loop")


async def test_map_async_runs_a_steady_stream_through_one_task() -> None:
    tasks: set[asyncio.Task[object] | None] = set()

    async def record(x: int) -> int:
        tasks.add(asyncio.current_task())
        await asyncio.sleep(0)
        return x

    # a subscriber: served by one task (over a source at hand) or one worker (subscribed)
    for source in (Flux.range(0, 1000), Flux.defer(lambda: Flux.range(0, 1000))):
        tasks.clear()
        ts = TestSubscriber[int](initial_request=MAX_DEMAND)
        source.map_async(record).subscribe(ts)
        await ts.wait_terminated()
        ts.assert_value_count(1000).assert_complete()
        assert len(tasks) == 1  # no task per item
        assert asyncio.current_task() not in tasks
    # a fold over a source at hand: no task at all, the awaiting one awaits every call
    tasks.clear()
    assert len(await Flux.range(0, 1000).map_async(record).to_list()) == 1000
    assert tasks == {asyncio.current_task()}


async def test_map_async_over_a_source_at_hand_calls_only_for_what_is_requested() -> None:
    called: list[int] = []

    async def record(x: int) -> int:
        called.append(x)
        await asyncio.sleep(0)
        return x

    ts = TestSubscriber[int]()
    Flux.range(0, 100).map_async(record).subscribe(ts)
    for _ in range(3):
        await asyncio.sleep(0)
    assert called == []  # nothing asked for: no call
    ts.request(2)
    await ts.wait_for_values(2)
    for _ in range(3):
        await asyncio.sleep(0)
    assert called == [0, 1]  # one call per item asked for, none ahead of demand
    ts.request(MAX_DEMAND)
    await ts.wait_terminated()
    ts.assert_values(*range(100)).assert_complete()


async def test_map_async_calls_that_never_suspend_do_not_starve_the_loop() -> None:
    async def instant(x: int) -> int:
        return x

    seen_by_tick: list[int] = []
    ts = TestSubscriber[int](initial_request=2**63 - 1)
    Flux.range(0, 10_000).map_async(instant).subscribe(ts)
    asyncio.get_running_loop().call_soon(lambda: seen_by_tick.append(len(ts.values)))
    await ts.wait_terminated()
    ts.assert_value_count(10_000).assert_complete()
    assert seen_by_tick
    assert seen_by_tick[0] < 10_000
