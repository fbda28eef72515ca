"""group_by: keyed sub-streams with their own demand, bounded by max_groups."""

from __future__ import annotations

import asyncio

import pytest

from reactive_aio import Flux
from reactive_aio.testing import TestSubscriber

from ._transform_support import Probe


def _subscribe_groups(
    outer: TestSubscriber[tuple[int, Flux[int]]], request: int
) -> dict[int, TestSubscriber[int]]:
    groups: dict[int, TestSubscriber[int]] = {}
    for key, group in outer.values:
        if key not in groups:
            groups[key] = TestSubscriber[int](initial_request=request)
            group.subscribe(groups[key])
    return groups


def test_group_by_routes_items_and_emits_groups_within_outer_demand() -> None:
    outer = TestSubscriber[tuple[int, Flux[int]]]()
    Flux.range(0, 10).group_by(lambda x: x % 3).subscribe(outer)
    outer.assert_no_values().assert_not_terminated()
    outer.request(1)
    assert [key for key, _ in outer.values] == [0]
    outer.request(10)
    assert [key for key, _ in outer.values] == [0, 1, 2]
    outer.assert_complete()
    groups = _subscribe_groups(outer, 0)
    groups[1].assert_no_values()  # each group has its own demand
    groups[1].request(2)
    groups[1].assert_values(1, 4).assert_not_terminated()
    groups[1].request(5)
    groups[1].assert_values(1, 4, 7).assert_complete()
    groups[0].request(10)
    groups[0].assert_values(0, 3, 6, 9).assert_complete()


def test_group_by_prefetch_stalls_until_groups_consume() -> None:
    probe = Probe(100)
    outer = TestSubscriber[tuple[int, Flux[int]]](initial_request=10)
    Flux.from_publisher(probe).group_by(lambda x: x % 2, prefetch=8).subscribe(outer)
    assert probe.requests == [8]  # the trap: nothing more until groups consume
    groups = _subscribe_groups(outer, 0)
    groups[0].request(3)
    groups[1].request(3)
    assert probe.requested == 8 + 6  # replenished once 3/4 of the prefetch was consumed
    groups[0].request(100)
    groups[1].request(100)
    groups[0].assert_value_count(50).assert_complete()
    groups[1].assert_value_count(50).assert_complete()


def test_group_by_max_groups_fails_everything() -> None:
    probe = Probe(10)
    outer = TestSubscriber[tuple[int, Flux[int]]](initial_request=10)
    Flux.from_publisher(probe).group_by(lambda x: x, max_groups=2).subscribe(outer)
    outer.assert_value_count(2).assert_error(RuntimeError, match="max_groups=2")
    assert probe.cancels == 1
    groups = _subscribe_groups(outer, 5)
    groups[0].assert_values(0).assert_error(RuntimeError)


def test_group_by_raising_key_and_upstream_error() -> None:
    probe = Probe(10)
    outer = TestSubscriber[tuple[int, Flux[int]]](initial_request=10)
    Flux.from_publisher(probe).group_by(lambda x: 1 // (x - 1)).subscribe(outer)
    outer.assert_value_count(1).assert_error(ZeroDivisionError)
    assert probe.cancels == 1
    failed = TestSubscriber[tuple[int, Flux[int]]](initial_request=10)
    Flux.from_publisher(Probe(3, OSError("x"))).group_by(lambda x: x % 2).subscribe(failed)
    failed.assert_value_count(2).assert_error(OSError)
    groups = _subscribe_groups(failed, 5)
    groups[0].assert_values(0, 2).assert_error(OSError)


def test_group_by_cancelled_group_is_forgotten_and_reopened() -> None:
    outer = TestSubscriber[tuple[int, Flux[int]]](initial_request=10)
    opened: list[int] = []

    def track(item: tuple[int, Flux[int]]) -> None:
        key, group = item
        opened.append(key)
        ts = TestSubscriber[int](initial_request=1)
        group.subscribe(ts)
        if len(opened) == 1:
            ts.cancel()

    outer.on_next_callback = track
    Flux.just(1, 1, 1).group_by(lambda x: x).subscribe(outer)
    assert opened == [1, 1]  # the second item opened a new group for key 1
    outer.assert_complete()


def test_group_by_outer_cancel_waits_for_open_groups() -> None:
    probe = Probe(100)
    outer = TestSubscriber[tuple[int, Flux[int]]](initial_request=1)
    Flux.from_publisher(probe).group_by(lambda x: x % 2, prefetch=4).subscribe(outer)
    groups = _subscribe_groups(outer, 0)
    outer.cancel()
    assert probe.cancels == 0
    groups[0].cancel()
    assert probe.cancels == 1


def test_group_by_bad_arguments() -> None:
    with pytest.raises(ValueError, match="> 0"):
        Flux.range(0, 1).group_by(lambda x: x, max_groups=0)


async def test_group_by_flattened() -> None:
    result = await (
        Flux.range(0, 10)
        .group_by(lambda x: x % 2)
        .flat_map(lambda pair: pair[1].buffer(100).map(lambda xs: (pair[0], xs)))
        .to_list()
    )
    assert sorted(result) == [(0, [0, 2, 4, 6, 8]), (1, [1, 3, 5, 7, 9])]


async def test_group_by_groups_cancelled_inside_on_next_keep_upstream_demand() -> None:
    # Every group ends from inside its first on_next (take(1)); the items it consumed must
    # still count towards replenishing upstream, or upstream demand dries up.
    probe = Probe(100)
    downstream = TestSubscriber[int](initial_request=1000)
    Flux.from_publisher(probe).group_by(lambda x: x % 3, prefetch=4).flat_map(
        lambda group: group[1].take(1)
    ).subscribe(downstream)
    downstream.assert_values(*range(100)).assert_complete()
    assert probe.requested >= 100


async def test_group_by_groups_ending_early_complete_the_stream() -> None:
    async with asyncio.timeout(10):  # it used to stall after 448 items
        result = await (
            Flux.range(0, 1000)
            .group_by(lambda x: x // 5)
            .flat_map(lambda group: group[1].take(5))
            .to_list()
        )
    assert sorted(result) == list(range(1000))


async def test_group_by_nested_async_for_leaving_each_group_loses_nothing() -> None:
    seen: list[int] = []
    async with asyncio.timeout(10):
        async for _, group in Flux.range(0, 300).group_by(lambda x: x // 5):
            async for item in group:
                seen.append(item)
                if len(seen) % 5 == 0:
                    break
    assert seen == list(range(300))


async def test_group_by_late_subscriber_keeps_its_buffered_items_when_upstream_ends_meanwhile() -> (
    None
):
    # prefetch 4 asks for 0..3: groups 0 (0, 1) and 1 (2, 3) buffer unseen. Group 1's replay
    # makes the third item consumed, which asks range for more; range sends 4, 5 and
    # completes while item 3 is still waiting to be replayed.
    outer = TestSubscriber[tuple[int, Flux[int]]](initial_request=10)
    Flux.range(0, 6).group_by(lambda x: x // 2, prefetch=4).subscribe(outer)
    first, second = (TestSubscriber[int](initial_request=10) for _ in range(2))
    outer.values[0][1].subscribe(first)
    first.assert_values(0, 1).assert_not_terminated()
    outer.values[1][1].subscribe(second)
    second.assert_values(2, 3).assert_complete()
    first.assert_complete()
    outer.assert_value_count(3).assert_complete()
