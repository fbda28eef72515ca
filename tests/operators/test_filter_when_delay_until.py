"""filter_when and delay_until: per-item asynchronous tests and triggers, in order. Cases
named ``test_reactor_*`` are ported from reactor-core's ``FluxFilterWhenTest`` and
``FluxDelayUntilTest``."""

from __future__ import annotations

import asyncio

import pytest

from reactive_aio import Flux
from reactive_aio.testing import TestPublisher, TestSubscriber, run_virtual

from ._transform_support import Probe


async def test_reactor_normal_sync() -> None:
    kept = Flux.range(1, 10).filter_when(lambda v: Flux.just(v % 2 == 0))
    assert await kept.to_list() == [2, 4, 6, 8, 10]


def test_reactor_normal() -> None:
    """Each test answers 0.1 s later (virtual time); order is kept."""

    async def even_later(v: int) -> bool:
        await asyncio.sleep(0.1)
        return v % 2 == 0

    async def main() -> None:
        assert await Flux.range(1, 10).filter_when(even_later).to_list() == [2, 4, 6, 8, 10]

    run_virtual(main)


async def test_reactor_all_empty() -> None:
    assert await Flux.range(1, 10).filter_when(lambda v: Flux.empty()).to_list() == []


async def test_filter_when_asks_for_one_item_at_a_time_and_cancels_the_answer() -> None:
    probe = Probe(5)
    answers = [TestPublisher[bool].create() for _ in range(5)]
    ts = TestSubscriber[int](initial_request=10)
    Flux.from_publisher(probe).filter_when(lambda v: answers[v]).subscribe(ts)
    assert probe.requests == [1]
    answers[0].next(True)
    answers[0].assert_cancelled()
    ts.assert_values(0)
    assert probe.requests == [1, 1]


async def test_filter_when_raising_fn_fails_and_cancels() -> None:
    probe = Probe(5)
    ts = TestSubscriber[int](initial_request=10)
    Flux.from_publisher(probe).filter_when(lambda v: Flux.just(1 // (v - 1))).subscribe(ts)
    ts.assert_values(0).assert_error(ZeroDivisionError)
    assert probe.cancels == 1


def test_delay_until_holds_each_item_for_its_trigger() -> None:
    """Items wait for their trigger, in order."""

    async def main() -> None:
        loop = asyncio.get_running_loop()
        start = loop.time()
        delayed = Flux.just(3, 1, 2).delay_until(lambda v: asyncio.sleep(v))
        times = [(item, loop.time() - start) async for item in delayed]
        assert times == [(3, 3.0), (1, 4.0), (2, 6.0)]

    run_virtual(main)


async def test_delay_until_with_a_publisher_trigger_ignores_its_items() -> None:
    trigger = TestPublisher[str].create()
    ts = TestSubscriber[int](initial_request=5)
    Flux.just(1, 2).delay_until(lambda v: trigger if v == 1 else Flux.empty()).subscribe(ts)
    trigger.next("ignored")
    ts.assert_no_values()
    trigger.complete()
    ts.assert_values(1, 2).assert_complete()


async def test_delay_until_trigger_error_ends_the_stream() -> None:
    ts = TestSubscriber[int](initial_request=5)
    Flux.just(1, 2).delay_until(lambda v: Flux.error(OSError("x"))).subscribe(ts)
    ts.assert_no_values().assert_error(OSError)


def test_reactor_flux2_doesnt_reorder_via_delays() -> None:
    """reactor-core's ``testFlux2DoesntReorderViaDelays``: a shorter trigger does not overtake."""

    async def main() -> None:
        loop = asyncio.get_running_loop()
        start = loop.time()
        delayed = Flux.just(100, 200, 300).delay_until(lambda v: asyncio.sleep((400 - v) / 1000))
        times = [(item, round(loop.time() - start, 3)) async for item in delayed]
        assert times == [(100, 0.3), (200, 0.5), (300, 0.6)]

    run_virtual(main)


async def test_reactor_trigger_sequence_has_multiple_values_not_cancelled() -> None:
    """A trigger of several items is played to its end, never cancelled at its first item."""
    cancels: list[str] = []
    trigger = Flux.just(1, 2, 3).do_on_cancel(lambda: cancels.append("trigger"))
    assert await Flux.just("foo").delay_until(lambda _: trigger).to_list() == ["foo"]
    assert cancels == []


async def test_reactor_source_and_trigger_have_errors_not_delayed() -> None:
    """The source's error wins: no trigger is asked for when there is no item."""
    boom1 = OSError("boom1")
    with pytest.raises(OSError, match="boom1"):
        await Flux.error(boom1).delay_until(lambda _: Flux.error(OSError("boom2"))).to_list()


def test_reactor_api_delay_until_errors_immediately() -> None:
    """reactor-core's ``testAPIDelayUntilErrorsImmediately``: an error is not held back."""

    async def main() -> None:
        loop = asyncio.get_running_loop()
        start = loop.time()
        with pytest.raises(ValueError, match="boom"):
            await Flux.error(ValueError("boom")).delay_until(lambda _: asyncio.sleep(2)).to_list()
        assert loop.time() - start < 0.2

    run_virtual(main)
