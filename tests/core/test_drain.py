"""The trampolined drain: depth, batching, foreign threads, rule 2.13."""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
from collections.abc import Callable
from typing import Any

import pytest

from reactive_aio import MAX_DEMAND, Flux
from reactive_aio._core import DRAIN_BATCH, DROPS_PER_ITEM, add_demand, produced
from reactive_aio.testing import TestSubscriber


def test_demand_saturates_at_max() -> None:
    assert add_demand(MAX_DEMAND - 1, 5) == MAX_DEMAND
    assert add_demand(3, 4) == 7
    assert produced(MAX_DEMAND, 10) == MAX_DEMAND
    assert produced(10, 4) == 6


def test_million_items_one_request_at_a_time_keep_depth_one() -> None:
    ts = TestSubscriber[int](initial_request=1)
    ts.on_next_callback = lambda _: ts.request(1)
    Flux.range(0, 1_000_000).subscribe(ts)  # no loop: the drain runs to the end in one call
    ts.assert_value_count(1_000_000).assert_complete().assert_max_depth(1)


async def test_million_items_one_request_at_a_time_on_a_loop() -> None:
    ts = TestSubscriber[int](initial_request=1)
    ts.on_next_callback = lambda _: ts.request(1)
    Flux.range(0, 1_000_000).map(lambda x: x + 1).subscribe(ts)
    await ts.wait_terminated(timeout=60)
    ts.assert_value_count(1_000_000).assert_complete().assert_max_depth(1)
    assert ts.values[-1] == 1_000_000


async def test_drain_yields_to_the_loop_after_a_batch() -> None:
    ts = TestSubscriber[int](initial_request=MAX_DEMAND)
    Flux.range(0, 10 * DRAIN_BATCH).subscribe(ts)
    assert len(ts.values) == DRAIN_BATCH  # the rest waits for the next loop iteration
    await ts.wait_terminated()
    ts.assert_value_count(10 * DRAIN_BATCH).assert_complete()


_DROPS = 100 * DRAIN_BATCH

_DROPPING: dict[str, Callable[[Callable[[int], bool]], Flux[int]]] = {
    "range": lambda keep: Flux.range(0, _DROPS).filter(keep),
    "list, mapped": lambda keep: Flux.from_iterable(list(range(_DROPS))).map(abs).filter(keep),
    "generator": lambda keep: Flux.from_iterable(x for x in range(_DROPS)).filter(keep),
    "flat_map inner": lambda keep: Flux.just(0).flat_map(
        lambda _: Flux.from_iterable(x for x in range(_DROPS)).filter(keep)
    ),
    "concat_map inner": lambda keep: Flux.just(0).concat_map(
        lambda _: Flux.range(0, _DROPS).map(abs).filter(keep)
    ),
}
"""Fused filters that drop every item, inside a source's emit loop or a drain's inner."""


@pytest.mark.parametrize("where", list(_DROPPING))
async def test_items_a_fused_filter_drops_count_toward_the_batch(where: str) -> None:
    tested = 0

    def never(x: int) -> bool:
        nonlocal tested
        tested += 1
        return False

    ts = TestSubscriber[int](initial_request=1)
    _DROPPING[where](never).subscribe(ts)
    # The pass yielded to the loop after a pass's worth of drops; the rest waits.
    assert 0 < tested <= 2 * DROPS_PER_ITEM * DRAIN_BATCH
    await ts.wait_terminated()
    ts.assert_no_values().assert_complete()
    assert tested == _DROPS


class _Naturals:
    """Endless, and read afresh by every subscriber (a bare ``count()`` serves only one)."""

    def __iter__(self) -> itertools.count[int]:
        return itertools.count()


async def test_an_endless_run_of_drops_leaves_the_loop_free_to_end_it() -> None:
    for flux in (
        Flux.from_iterable(_Naturals()).filter(lambda x: x < 0),
        Flux.just(0).flat_map(
            lambda _: Flux.from_iterable(itertools.count()).filter(lambda x: x < 0)
        ),
    ):
        assert await asyncio.wait_for(flux.take_until(Flux.timer(0.01)).to_list(), 1) == []
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(flux.first(), 0.01)


async def test_requests_from_a_foreign_thread_run_on_the_loop_thread() -> None:
    ts = TestSubscriber[int]()
    Flux.range(0, 20_000).subscribe(ts)
    assert ts.subscription is not None
    subscription = ts.subscription

    def hammer() -> None:
        for _ in range(10_000):
            subscription.request(1)

    thread = threading.Thread(target=hammer)
    thread.start()
    await asyncio.to_thread(thread.join)
    await ts.wait_for_values(10_000, timeout=30)
    for _ in range(5):
        await asyncio.sleep(0)
    assert ts.values == list(range(10_000))
    assert ts.threads == {threading.get_ident()}
    ts.assert_not_terminated()


async def test_cancel_from_a_foreign_thread() -> None:
    ts = TestSubscriber[int](initial_request=5)
    Flux.never().subscribe(ts)
    assert ts.subscription is not None
    await asyncio.to_thread(ts.subscription.cancel)
    await asyncio.sleep(0)
    ts.request(1)  # a no-op after cancel
    ts.assert_not_terminated()


async def test_rule_2_13_raising_subscriber_is_cancelled_and_reported(
    caplog: pytest.LogCaptureFixture,
) -> None:
    loop = asyncio.get_running_loop()
    seen: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: seen.append(context))
    emitted: list[int] = []

    def explode(item: int) -> None:
        emitted.append(item)
        raise RuntimeError("subscriber bug")

    ts = TestSubscriber[int](initial_request=10, on_next_callback=explode)
    with caplog.at_level(logging.ERROR, logger="reactive_aio"):
        Flux.range(0, 10).map(lambda x: x * 2).subscribe(ts)
    assert emitted == [0]  # cancelled after the first failure: no further signal
    ts.assert_not_terminated()
    assert len(seen) == 1
    assert isinstance(seen[0]["exception"], RuntimeError)
    assert "rule 2.13" in seen[0]["message"]
    assert any("rule 2.13" in record.getMessage() for record in caplog.records)
    loop.set_exception_handler(None)


async def test_rule_2_13_raising_on_subscribe_is_reported(caplog: pytest.LogCaptureFixture) -> None:
    loop = asyncio.get_running_loop()
    seen: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: seen.append(context))

    class Broken:
        def on_subscribe(self, subscription: object) -> None:
            raise ValueError("cannot start")

        def on_next(self, item: int) -> None:
            raise AssertionError("no items after a failed on_subscribe")

        def on_error(self, error: BaseException) -> None:
            raise AssertionError("no error after a failed on_subscribe")

        def on_complete(self) -> None:
            raise AssertionError("no completion after a failed on_subscribe")

    with caplog.at_level(logging.ERROR, logger="reactive_aio"):
        Flux.just(1, 2).subscribe(Broken())
    assert [type(c["exception"]) for c in seen] == [ValueError]
    loop.set_exception_handler(None)
