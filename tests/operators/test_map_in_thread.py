"""map_in_thread: work runs in threads, bounded by demand and concurrency; errors; cancel."""

from __future__ import annotations

import asyncio
import threading

import pytest

from reactive_aio import MAX_DEMAND, Flux, NullSignalError
from reactive_aio._operators._map_in_thread import MAX_BATCH, TIME_SLICE
from reactive_aio.testing import TestSubscriber

from ._probe import Probe


async def test_map_in_thread_runs_off_the_loop_thread_in_order() -> None:
    loop_thread = threading.get_ident()
    seen: set[int] = set()

    def work(x: int) -> int:
        seen.add(threading.get_ident())
        return x * 2

    result = await Flux.range(0, 20).map_in_thread(work, concurrency=4).to_list()
    assert result == [x * 2 for x in range(20)]
    assert loop_thread not in seen


async def test_map_in_thread_demand_bounds_the_work() -> None:
    source = Probe(Flux.range(0, 100))
    ts = TestSubscriber[int]()
    Flux(source).map_in_thread(lambda x: x, concurrency=4).subscribe(ts)
    assert source.requests == []  # no demand, no work
    ts.request(1)
    await ts.wait_for_values(1)
    assert source.requested == 1
    ts.request(2)
    await ts.wait_for_values(3)
    ts.assert_values(0, 1, 2)
    assert source.requested == 3
    ts.request(MAX_DEMAND)
    await ts.wait_terminated()
    ts.assert_value_count(100).assert_complete()
    assert all(n <= 4 * MAX_BATCH for n in source.requests)


async def test_map_in_thread_never_runs_more_than_concurrency_at_once() -> None:
    running = 0
    peak = 0
    lock = threading.Lock()

    def work(x: int) -> int:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        threading.Event().wait(0.001)  # blocking work
        with lock:
            running -= 1
        return x

    result = await Flux.range(0, 30).map_in_thread(work, concurrency=3, ordered=False).to_list()
    assert sorted(result) == list(range(30))
    assert 1 <= peak <= 3


async def test_map_in_thread_batches_fast_work_and_keeps_order() -> None:
    result = await Flux.range(0, 5000).map_in_thread(lambda x: x + 1, concurrency=3).to_list()
    assert result == list(range(1, 5001))


async def test_map_in_thread_slow_work_is_handed_back_item_by_item() -> None:
    gate = threading.Event()

    def work(x: int) -> int:
        if x == 1:
            gate.wait(5)  # the batch [0, 1] must hand 0 back before 1 finishes
        else:
            threading.Event().wait(2 * TIME_SLICE)
        return x

    ts = TestSubscriber[int](initial_request=2)
    Flux.range(0, 2).map_in_thread(work).subscribe(ts)
    await ts.wait_for_values(1)
    ts.assert_values(0)
    gate.set()
    await ts.wait_terminated()
    ts.assert_values(0, 1).assert_complete()


async def test_map_in_thread_unordered_emits_as_finished() -> None:
    release = threading.Event()

    def work(x: int) -> int:
        if x == 0:
            release.wait(5)
        return x

    ts = TestSubscriber[int](initial_request=10)
    Flux.range(0, 2).map_in_thread(work, concurrency=2, ordered=False).subscribe(ts)
    await ts.wait_for_values(1)
    ts.assert_values(1)
    release.set()
    await ts.wait_terminated()
    ts.assert_values(1, 0).assert_complete()


async def test_map_in_thread_raising_function_cancels_upstream_then_errors() -> None:
    source = Probe(Flux.range(0, 1000))

    def work(x: int) -> int:
        if x == 2:
            raise ValueError("bad item 2")
        return x

    ts = TestSubscriber[int](initial_request=10)
    Flux(source).map_in_thread(work).subscribe(ts)
    await ts.wait_terminated()
    ts.assert_values(0, 1).assert_error(ValueError, match="bad item 2")
    assert source.cancels == 1


async def test_map_in_thread_none_result_names_the_item() -> None:
    ts = TestSubscriber[int](initial_request=10)
    Flux.just(5).map_in_thread(lambda x: None).subscribe(ts)  # type: ignore[arg-type]
    await ts.wait_terminated()
    ts.assert_error(NullSignalError, match="returned None for 5")


async def test_map_in_thread_upstream_error() -> None:
    ts = TestSubscriber[int](initial_request=10)
    Flux.error(OSError("down")).map_in_thread(lambda x: x).subscribe(ts)
    await ts.wait_terminated()
    ts.assert_error(OSError, match="down")


async def test_map_in_thread_cancel_drops_running_work() -> None:
    started = threading.Event()
    release = threading.Event()
    source = Probe(Flux.range(0, 1000))

    def work(x: int) -> int:
        started.set()
        release.wait(5)
        return x

    ts = TestSubscriber[int](initial_request=10)
    Flux(source).map_in_thread(work).subscribe(ts)
    await asyncio.to_thread(started.wait, 5)
    ts.cancel()
    assert source.cancels == 1
    release.set()
    ts.assert_no_values().assert_not_terminated()


def test_map_in_thread_needs_a_loop_and_valid_concurrency() -> None:
    ts = TestSubscriber[int](initial_request=1)
    Flux.just(1).map_in_thread(lambda x: x).subscribe(ts)
    ts.assert_error(RuntimeError, match="running event loop")
    with pytest.raises(ValueError, match="concurrency"):
        Flux.just(1).map_in_thread(lambda x: x, concurrency=0)
