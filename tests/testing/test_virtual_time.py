"""The virtual-time loop: auto jumps, manual advance, real I/O, pytest integration."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from reactive_aio import Flux
from reactive_aio.testing import TestSubscriber, VirtualTimeLoop, advance, run_virtual

virtual = pytest.mark.asyncio(loop_factories=["virtual"])


def test_auto_jump_runs_an_hour_at_once() -> None:
    async def main() -> float:
        await asyncio.sleep(3600)
        return asyncio.get_running_loop().time()

    started = time.perf_counter()
    assert run_virtual(main) == 3600.0
    assert time.perf_counter() - started < 30  # generous: an hour of real time would hang


def test_timers_fire_in_order_at_their_times() -> None:
    async def main() -> list[tuple[str, float]]:
        loop = asyncio.get_running_loop()
        fired: list[tuple[str, float]] = []
        loop.call_later(5, lambda: fired.append(("b", loop.time())))
        loop.call_later(2, lambda: fired.append(("a", loop.time())))
        await asyncio.sleep(10)
        return fired

    assert run_virtual(main) == [("a", 2.0), ("b", 5.0)]


def test_manual_mode_moves_only_on_advance() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        fired: list[float] = []
        loop.call_later(2, lambda: fired.append(loop.time()))
        loop.call_later(5, lambda: fired.append(loop.time()))
        await asyncio.sleep(0)
        assert loop.time() == 0.0
        await advance(3)
        assert fired == [2.0]
        assert loop.time() == 3.0
        await advance(3)
        assert fired == [2.0, 5.0]
        assert loop.time() == 6.0

    run_virtual(main, auto=False)


def test_advance_from_outside_the_loop() -> None:
    loop = VirtualTimeLoop(auto=False)
    try:
        fired: list[float] = []
        loop.call_later(1.5, lambda: fired.append(loop.time()))
        loop.advance(1)
        assert fired == []
        loop.advance(1)
        assert fired == [1.5]
        assert loop.time() == 2.0
    finally:
        loop.close()


def test_negative_advance_is_rejected() -> None:
    async def main() -> None:
        await advance(-1)

    with pytest.raises(ValueError, match="negative"):
        run_virtual(main)


async def test_advance_needs_a_virtual_loop() -> None:
    with pytest.raises(RuntimeError, match="VirtualTimeLoop"):
        await advance(1)


def test_other_threads_still_wake_the_loop() -> None:
    async def main() -> str:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[str] = loop.create_future()
        threading.Thread(
            target=lambda: loop.call_soon_threadsafe(future.set_result, "from a thread")
        ).start()
        return await future

    assert run_virtual(main, auto=False) == "from a thread"


def test_fixture_gives_a_virtual_loop(virtual_time: VirtualTimeLoop) -> None:
    values = virtual_time.run_until_complete(Flux.interval(60).take(3).to_list())
    assert values == [0, 1, 2]
    assert virtual_time.time() == 180.0


@virtual
async def test_marker_selects_the_virtual_loop() -> None:
    loop = asyncio.get_running_loop()
    assert isinstance(loop, VirtualTimeLoop)
    ts = TestSubscriber[int](initial_request=10)
    Flux.interval(1.0).take(3).subscribe(ts)
    await ts.wait_terminated()
    ts.assert_values(0, 1, 2).assert_complete()
    assert [when for when, kind, _ in ts.timeline if kind == "next"] == [1.0, 2.0, 3.0]
