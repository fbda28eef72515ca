"""then: after the source completed (its items dropped), *other*'s items, or completion."""

from __future__ import annotations

import asyncio

from reactive_aio import Flux
from reactive_aio.testing import TestPublisher, TestSubscriber, run_virtual

from ._transform_support import Probe


async def test_then_without_other_completes_empty() -> None:
    assert await Flux.range(0, 5).then().to_list() == []


async def test_then_many_plays_other_after_completion() -> None:
    """Reactor's ``thenMany``: the source's items are dropped, *other* follows."""
    assert await Flux.just(1, 2, 3).then(Flux.just("a", "b")).to_list() == ["a", "b"]


async def test_then_subscribes_other_only_after_completion_with_outstanding_demand() -> None:
    source = TestPublisher[int].create()
    other = Probe(10)
    ts = TestSubscriber[int](initial_request=3)
    Flux.from_publisher(source).then(other).subscribe(ts)
    source.next(7, 8)
    assert other.subscribes == 0
    source.complete()
    assert other.subscribes == 1
    assert other.requests == [3]
    ts.assert_values(0, 1, 2).assert_not_terminated()
    ts.request(10)
    ts.assert_values(*range(10)).assert_complete()


async def test_then_source_error_skips_other() -> None:
    other = Probe(3)
    ts = TestSubscriber[int](initial_request=5)
    Flux.from_publisher(Probe(2, OSError("x"))).then(other).subscribe(ts)
    ts.assert_no_values().assert_error(OSError)
    assert other.subscribes == 0


async def test_then_cancel_during_source_cancels_it() -> None:
    source = TestPublisher[int].create()
    ts = TestSubscriber[int](initial_request=1)
    Flux.from_publisher(source).then(Flux.just(1)).subscribe(ts)
    ts.cancel()
    source.assert_cancelled()


async def test_start_with_still_plays_items_first() -> None:
    assert await Flux.range(0, 2).start_with(8, 9).to_list() == [8, 9, 0, 1]


async def test_reactor_chained() -> None:
    """reactor-core's ``MonoThenIgnoreTest.chained``: only the last stream's items remain."""
    assert await Flux.just(0).then(Flux.just(1)).then(Flux.just(2)).to_list() == [2]


async def test_reactor_flux_then_mono_and_shift() -> None:
    """reactor-core's ``fluxThenMonoAndShift`` (its issue 661)."""
    greetings = Flux.just("Good Morning", "Hello")
    assert await greetings.then(Flux.just("Good Afternoon")).then(Flux.just("Bye")).to_list() == [
        "Bye"
    ]


async def test_reactor_cancel() -> None:
    """reactor-core's ``MonoThenIgnoreTest.cancel``: cancelling ``then()`` cancels the source."""
    source = TestPublisher[str].create()
    ts = TestSubscriber[object](initial_request=1)
    Flux.from_publisher(source).then().subscribe(ts)
    ts.cancel()
    source.assert_cancelled()


def test_reactor_normal_time() -> None:
    """reactor-core's ``normalTime``: completion waits for *other*, however long it takes."""

    async def main() -> None:
        loop = asyncio.get_running_loop()
        start = loop.time()
        assert await Flux.just(1).then(Flux.timer(123.0).then()).to_list() == []
        assert loop.time() - start == 123.0

    run_virtual(main)
