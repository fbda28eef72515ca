"""snapshot(): the stages of a running chain, from the consumer up to the source, with the
figures each stage keeps anyway (the scanning protocol of `reactive_aio._core._scan`)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator
from typing import Any, ClassVar

import attrs
import pytest

from reactive_aio import (
    MAX_DEMAND,
    Flux,
    MulticastProcessor,
    Publisher,
    Subscriber,
    Subscription,
    snapshot,
)
from reactive_aio.lowlevel import LoopBound, OperatorSubscriber, StageScan, operator_name, scan_of
from reactive_aio.testing import TestSubscriber


async def _settle(condition: Any, rounds: int = 50) -> None:
    """Let the loop run until *condition()* holds (an async boundary works in callbacks)."""
    for _ in range(rounds):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("the chain did not settle")


def _figures(stage: dict[str, Any]) -> tuple[Any, ...]:
    return (
        stage["operator"],
        stage["state"],
        stage["demand"],
        stage["buffered"],
        stage["capacity"],
        stage["emitted"],
    )


async def test_a_group_nobody_consumes_is_named_with_what_it_holds_and_the_demand() -> None:
    taken: list[int] = []

    def open_group(pair: tuple[int, Flux[int]]) -> None:
        key, group = pair
        if key == 0:  # the odd group is never subscribed
            group.subscribe(on_next=taken.append)

    handle = Flux.range(0, 100).group_by(lambda x: x % 2, prefetch=8).subscribe(on_next=open_group)
    assert handle is not None
    graph = snapshot(handle)
    stages = graph.to_dict()["stages"]

    assert [_figures(stage) for stage in stages] == [
        ("subscribe", "active", None, None, None, None),
        ("group_by", "active", MAX_DEMAND, 0, None, 2),  # two groups handed out
        ("range", "active", 0, None, None, 8),  # its 8 items went out: nothing more is asked
    ]
    even, odd = stages[1]["inners"]
    assert _figures(even[0]) == ("group", "active", MAX_DEMAND, 0, 8, 4)
    assert even[0]["tags"] == {"key": "0"}
    # the stall: four items held in the group with no subscriber, of the window of 8
    assert _figures(odd[0]) == ("group", "active", 0, 4, 8, 0)
    assert odd[0]["tags"] == {"key": "1", "subscriber": "none"}
    assert taken == [0, 2, 4, 6]

    text = str(graph)
    assert text.splitlines()[0] == "subscribe [active]"
    assert "inner 1: group {key=1, subscriber=none} [active] demand=0 buffered=4/8" in text
    assert "└─ range [active] demand=0 emitted=8" in text
    json.dumps(graph.to_dict())
    handle.dispose()


async def test_a_slow_reader_behind_publish_on_holds_the_boundarys_items() -> None:
    iterator = Flux.range(0, 1000).publish_on(buffer_size=16).iterate()
    assert await anext(iterator) == 0
    # the reader is busy elsewhere: the boundary fills up to its bound, and no more is asked
    await _settle(lambda: snapshot(iterator).stages[0].buffered == 15)
    boundary, source = snapshot(iterator).to_dict()["stages"]

    # the reader's buffer took the boundary's place (async fusion): one stage, its bound
    assert _figures(boundary) == ("publish_on → async_iterator", "active", None, 15, 16, None)
    assert _figures(source) == ("range (pulled)", "active", 0, None, None, 16)
    assert "publish_on → async_iterator [active] buffered=15/16" in str(snapshot(iterator))
    await iterator.aclose()
    assert _figures(snapshot(iterator).to_dict()["stages"][0])[:2] == (
        "publish_on → async_iterator",
        "cancelled",
    )


async def test_a_publish_on_behind_a_map_is_a_stage_of_its_own() -> None:
    iterator = (
        Flux.range(0, 1000).publish_on(buffer_size=16).map(lambda x: x + 1).iterate(prefetch=4)
    )
    assert await anext(iterator) == 1
    await _settle(lambda: snapshot(iterator).stages[2].buffered == 12)
    reader, fused, boundary, source = snapshot(iterator).to_dict()["stages"]

    assert reader["operator"] == "async_iterator"
    assert (reader["buffered"], reader["capacity"]) == (3, 4)  # one taken of the window of 4
    assert fused["operator"] == "map (fused)"
    # the boundary holds 12 of its 16, owes its reader nothing, and its source is paused
    assert _figures(boundary) == ("publish_on", "active", 0, 12, 16, 4)
    # (its items at hand: pulled into the boundary's buffer a request at a time)
    assert _figures(source) == ("range (pulled)", "active", 0, None, None, 16)
    await iterator.aclose()


async def test_ended_chains_show_how_they_ended() -> None:
    completed = Flux.range(0, 3).map(lambda x: x * 2).subscribe(on_next=lambda _: None)
    cancelled = Flux.never().subscribe(on_next=lambda _: None)
    failed = Flux.error(ValueError("boom")).subscribe(on_error=lambda _: None)
    raising = Flux.range(0, 3).subscribe(on_next=lambda _: 1 / 0, on_error=lambda _: None)
    assert completed is not None
    assert cancelled is not None
    assert failed is not None
    assert raising is not None
    assert [stage.state for stage in snapshot(cancelled).stages] == ["active", "active"]
    cancelled.dispose()

    assert snapshot(completed).to_dict()["stages"] == [
        {
            "operator": "subscribe",
            "name": None,
            "tags": {},
            "state": "completed",
            "demand": None,
            "buffered": None,
            "capacity": None,
            "emitted": None,
            "error": None,
            "inners": [],
        }
    ]
    assert [stage.state for stage in snapshot(cancelled).stages] == ["cancelled"]
    (stage,) = snapshot(failed).stages
    assert (stage.state, stage.error) == ("failed", "ValueError('boom')")
    assert "subscribe [failed] error=ValueError('boom')" in str(snapshot(failed))
    (stage,) = snapshot(raising).stages
    assert stage.state == "failed"
    assert "ZeroDivisionError" in str(stage.error)


async def test_an_async_for_shows_its_end() -> None:
    done = Flux.range(0, 3).__aiter__()  # what ``async for x in flux`` iterates
    assert [item async for item in done] == [0, 1, 2]
    assert snapshot(done).stages[0].state == "completed"

    failing = Flux.concat(Flux.just(1), Flux.error(KeyError("k"))).iterate()
    with pytest.raises(KeyError):
        async for _ in failing:
            pass
    assert snapshot(failing).stages[0].state == "failed"


async def test_flat_map_and_merge_show_their_inner_streams() -> None:
    handle = (
        Flux.range(0, 10)
        .flat_map(lambda x: Flux.just(x).publish_on(buffer_size=4), concurrency=2)
        .subscribe(on_next=lambda _: None)
    )
    assert handle is not None
    graph = snapshot(handle)
    flat_map = graph.stages[1]
    assert flat_map.operator == "flat_map"
    assert len(flat_map.inners) == 2
    for inner in flat_map.inners:
        assert [stage.operator for stage in inner] == [
            "inner",
            "publish_on",
            "from_iterable (pulled)",
        ]
        assert (inner[0].buffered, inner[0].capacity) == (0, 32)
        assert (inner[1].buffered, inner[1].capacity) == (1, 4)  # its item waits for the loop
    assert graph.stages[2].operator == "range"
    assert (graph.stages[2].demand, graph.stages[2].emitted) == (0, 2)  # concurrency 2
    assert "├─ inner 0: inner [active] buffered=0/32" in str(graph)
    json.dumps(graph.to_dict())
    await _settle(lambda: handle.disposed)

    merged = Flux.merge(Flux.never(), Flux.never()).subscribe(on_next=lambda _: None)
    assert merged is not None
    (merge,) = [stage for stage in snapshot(merged).stages if stage.operator == "merge"]
    assert [[stage.operator for stage in inner] for inner in merge.inners] == [
        ["inner", "never"],
        ["inner", "never"],
    ]
    assert [inner[1].demand for inner in merge.inners] == [32, 32]
    merged.dispose()


async def test_a_fused_chain_is_one_stage_naming_its_operators() -> None:
    subscriber = TestSubscriber[int](initial_request=8)
    Flux.range(0, 100).map(lambda x: x * 2).filter(lambda x: x % 3 == 0).subscribe(subscriber)
    assert subscriber.subscription is not None
    (fused,) = snapshot(subscriber.subscription).stages  # the walk may start anywhere
    assert fused.operator == "range → map → filter (fused)"
    assert (fused.demand, fused.emitted) == (0, 8)  # the 8 kept items; drops are not counted
    subscriber.request(2)
    (fused,) = snapshot(subscriber.subscription).stages
    assert (fused.demand, fused.emitted) == (0, 10)
    subscriber.cancel()


async def test_a_processor_and_its_subscriber_are_stages() -> None:
    processor = MulticastProcessor[int](buffer_size=4)
    handle = Flux.from_publisher(processor).subscribe(on_next=lambda _: None, prefetch=2)
    assert handle is not None
    Flux.concat(Flux.range(0, 3), Flux.never()).subscribe(processor)
    graph = snapshot(handle)
    assert [stage.operator for stage in graph.stages] == [
        "subscribe",
        "lockstep",
        "MulticastProcessor",
        "concat",
    ]
    subscription, hub, source = graph.stages[1:]
    assert (subscription.demand, subscription.emitted) == (1, 3)  # asked 2, re-asked 2 after 1
    assert (hub.buffered, hub.capacity, hub.emitted, hub.tags) == (0, 4, 3, (("subscribers", "1"),))
    assert (source.demand, source.emitted) == (1, 3)  # the window of 4, 3 of it delivered
    handle.dispose()


@attrs.define(eq=False)
class _Named(OperatorSubscriber[int, int]):
    """An outside author's pass-through that names itself and carries tags."""

    stage_operator: ClassVar[str] = "tagged"
    stage_name: ClassVar[str] = "orders"
    stage_tags: ClassVar[tuple[tuple[str, str], ...]] = (("team", "billing"),)

    def on_next(self, item: int) -> None:
        self._next(item)


@attrs.frozen
class _NamedPublisher(Publisher[int], LoopBound):
    source: Publisher[int]

    def subscribe(self, subscriber: Subscriber[int]) -> None:
        self.source.subscribe(_Named(subscriber))


class _ForeignSubscription(Subscription):
    def request(self, n: int) -> None:
        pass

    def cancel(self) -> None:
        pass


class _ForeignPublisher(Publisher[int]):
    def subscribe(self, subscriber: Subscriber[int]) -> None:
        subscriber.on_subscribe(_ForeignSubscription())


async def test_an_outside_stage_names_itself_and_a_foreign_one_has_its_class_name() -> None:
    named = Flux.from_publisher(_NamedPublisher(Flux.never())).subscribe(on_next=lambda _: None)
    assert named is not None
    stage = snapshot(named).stages[1]
    assert (stage.operator, stage.name, stage.tags) == ("tagged", "orders", (("team", "billing"),))
    assert "tagged 'orders' {team=billing} [active]" in str(snapshot(named))
    named.dispose()

    foreign = Flux.from_publisher(_ForeignPublisher()).subscribe(on_next=lambda _: None)
    assert foreign is not None
    operators = [stage.operator for stage in snapshot(foreign).stages]
    assert operators[0] == "subscribe"
    assert operators[-1] == "_ForeignSubscription"
    assert snapshot(foreign).stages[-1].demand is None
    foreign.dispose()


async def test_operator_names_come_from_the_class() -> None:
    assert operator_name(_Named) == "tagged"
    assert operator_name(_ForeignSubscription) == "_ForeignSubscription"
    assert scan_of(object()) == StageScan(operator="object")


async def test_off_the_loop_it_refuses() -> None:
    iterator = Flux.range(0, 100).publish_on(buffer_size=4).iterate()
    assert await anext(iterator) == 0
    with pytest.raises(RuntimeError, match="loop the chain runs on"):
        await asyncio.to_thread(snapshot, iterator)
    await iterator.aclose()


async def _pairs() -> AsyncGenerator[int, None]:
    yield 1


async def test_an_unknown_handle_is_one_stage() -> None:
    generator = _pairs()
    (stage,) = snapshot(generator).stages
    assert stage.operator == "async_generator"
    await generator.aclose()


class _Cycle:
    """A stage that names itself as its upstream and its inner: the walk must end."""

    def scan_stage(self) -> StageScan:
        return StageScan(operator="cycle", upstream=self, inners=(self,))


async def test_a_stage_seen_already_ends_the_walk() -> None:
    graph = snapshot(_Cycle())
    assert [(stage.operator, stage.inners) for stage in graph.stages] == [("cycle", ())]
    assert str(graph) == "cycle [active]"
