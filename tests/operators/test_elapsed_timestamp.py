"""elapsed and timestamp: the event loop's monotonic clock. ``test_rxpy_*`` cases are ported
from RxPY's ``test_timestamp.py``/``test_timeinterval.py``, on virtual time."""

from __future__ import annotations

import asyncio

from reactive_aio import Flux
from reactive_aio.testing import TestPublisher, TestSubscriber, run_virtual

TICKS = ((210, 2), (230, 3), (260, 4), (300, 5), (350, 6))
"""RxPY's hot source: items 2…6 at these times (seconds here), subscribed at 200."""


def _play(elapsed: bool) -> list[tuple[float, int]]:
    values: list[tuple[float, int]] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        start = loop.time()
        await asyncio.sleep(200)
        source = TestPublisher[int].create()
        ts = TestSubscriber[tuple[float, int]](initial_request=100)
        flux = Flux.from_publisher(source)
        (flux.elapsed() if elapsed else flux.timestamp()).subscribe(ts)
        for at, item in TICKS:
            await asyncio.sleep(start + at - loop.time())
            source.next(item)
        source.complete()
        ts.assert_complete()
        values.extend((round(t - (0 if elapsed else start), 6), x) for t, x in ts.values)

    run_virtual(main)
    return values


def test_rxpy_timestamp_regular() -> None:
    assert _play(elapsed=False) == list(TICKS)


def test_rxpy_time_interval_regular() -> None:
    """RxPY's ``time_interval``: the first interval runs from the subscription."""
    assert _play(elapsed=True) == [(10, 2), (20, 3), (30, 4), (40, 5), (50, 6)]


async def test_timestamp_reads_the_running_loop_clock() -> None:
    loop = asyncio.get_running_loop()
    before = loop.time()
    stamped = await Flux.range(0, 3).timestamp().to_list()
    after = loop.time()
    assert [x for _, x in stamped] == [0, 1, 2]
    assert all(before <= t <= after for t, _ in stamped)
    assert [t for t, _ in stamped] == sorted(t for t, _ in stamped)


async def test_elapsed_is_never_negative_and_passes_demand_through() -> None:
    source = TestPublisher[int].create()
    ts = TestSubscriber[tuple[float, int]](initial_request=1)
    Flux.from_publisher(source).elapsed().subscribe(ts)
    source.assert_requested(1)
    source.next(7)
    await asyncio.sleep(0.01)
    ts.request(1)
    source.next(8)
    (first, a), (second, b) = ts.values
    assert (a, b) == (7, 8)
    assert first >= 0
    assert second >= 0.009


async def test_elapsed_error_passes_through() -> None:
    ts = TestSubscriber[tuple[float, int]](initial_request=5)
    Flux.error(OSError("x")).elapsed().subscribe(ts)
    ts.assert_error(OSError)
