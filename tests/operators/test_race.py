"""race: the first source to signal wins, the others are cancelled."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from reactive_aio import Flux
from reactive_aio.testing import TestSubscriber

from ._probe import Probe


async def _after(gate: asyncio.Event, *items: int) -> AsyncIterator[int]:
    await gate.wait()
    for item in items:
        yield item


def test_race_waits_for_demand() -> None:
    ts = TestSubscriber[int]()
    Flux.race(Flux.never(), Flux.range(0, 3)).subscribe(ts)
    ts.assert_no_values()
    ts.request(1)
    ts.assert_values(0)
    ts.request(5)
    ts.assert_values(0, 1, 2).assert_complete()


def test_race_first_synchronous_source_wins_and_later_ones_are_not_subscribed() -> None:
    later = Probe(Flux.range(10, 3))
    ts = TestSubscriber[int](initial_request=10)
    Flux.race(Flux.range(0, 2), later).subscribe(ts)
    ts.assert_values(0, 1).assert_complete()
    assert later.subscribed == 0


async def test_race_loser_is_cancelled() -> None:
    gates = [asyncio.Event(), asyncio.Event()]
    loser = Probe(Flux.from_async_iterable(_after(gates[0], 1)))
    ts = TestSubscriber[int](initial_request=10)
    Flux.race(loser, Flux.from_async_iterable(_after(gates[1], 7, 8))).subscribe(ts)
    gates[1].set()
    await ts.wait_terminated()
    ts.assert_values(7, 8).assert_complete()
    assert loser.cancels == 1


def test_race_error_wins() -> None:
    other = Probe(Flux.never())
    ts = TestSubscriber[int](initial_request=10)
    Flux.race(other, Flux.error(OSError("first"))).subscribe(ts)
    ts.assert_error(OSError, match="first")
    assert other.cancels == 1


def test_race_cancel_and_no_sources() -> None:
    sources = [Probe(Flux.never()) for _ in range(2)]
    ts = TestSubscriber[int](initial_request=10)
    Flux.race(*sources).subscribe(ts)
    ts.cancel()
    assert [p.cancels for p in sources] == [1, 1]
    ts2 = TestSubscriber[int]()
    Flux.race().subscribe(ts2)
    ts2.assert_complete()
