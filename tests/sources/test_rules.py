"""Sections 1 and 3 of the specification, rule by rule, for every source."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import AsyncIterator, Callable

import pytest

from reactive_aio import (
    MAX_DEMAND,
    Flux,
    NonPositiveRequestError,
    NullSignalError,
    ProtocolViolationError,
    Publisher,
    Subscriber,
)
from reactive_aio.testing import TestSubscriber


async def _agen(n: int) -> AsyncIterator[int]:
    for i in range(n):
        yield i


class _ThirdParty:
    """A minimal publisher of another library: only the spec's method."""

    def __init__(self, n: int) -> None:
        self._n = n

    def subscribe(self, subscriber: Subscriber[int]) -> None:
        Flux.range(0, self._n).subscribe(subscriber)


SOURCES: dict[str, Callable[[int], Flux[int]]] = {
    "just": lambda n: Flux.just(*range(n)),
    "from_iterable": lambda n: Flux.from_iterable(iter(range(n))),
    "range": lambda n: Flux.range(0, n),
    "defer": lambda n: Flux.defer(lambda: Flux.range(0, n)),
    "from_async_iterable": lambda n: Flux.from_async_iterable(_agen(n)),
    "from_publisher": lambda n: Flux.from_publisher(_ThirdParty(n)),
}

sources = pytest.mark.parametrize("make", SOURCES.values(), ids=SOURCES.keys())


async def settle() -> None:
    """Let tasks that sources own (async iteration) run to quiescence."""
    for _ in range(20):
        await asyncio.sleep(0)


@sources
async def test_rule_1_1_never_more_than_requested(make: Callable[[int], Flux[int]]) -> None:
    ts = TestSubscriber[int]()
    make(10).subscribe(ts)
    await settle()
    ts.assert_no_values()
    ts.request(3)
    await settle()
    ts.assert_values(0, 1, 2).assert_not_terminated()
    ts.request(2)
    await settle()
    ts.assert_values(0, 1, 2, 3, 4)
    ts.cancel()


@sources
async def test_rule_1_2_fewer_than_requested_then_complete(
    make: Callable[[int], Flux[int]],
) -> None:
    ts = TestSubscriber[int](initial_request=10)
    make(3).subscribe(ts)
    await ts.wait_terminated()
    ts.assert_values(0, 1, 2).assert_complete()


@sources
async def test_rule_1_3_signals_are_serial(make: Callable[[int], Flux[int]]) -> None:
    ts = TestSubscriber[int](initial_request=1)
    ts.on_next_callback = lambda _: ts.request(1)
    make(50).subscribe(ts)
    await ts.wait_terminated()
    ts.assert_value_count(50).assert_complete().assert_max_depth(1)


@sources
async def test_rule_1_5_finite_stream_completes(make: Callable[[int], Flux[int]]) -> None:
    ts = TestSubscriber[int](initial_request=MAX_DEMAND)
    make(5).subscribe(ts)
    await ts.wait_terminated()
    ts.assert_values(0, 1, 2, 3, 4).assert_complete()


@sources
async def test_rule_1_5_empty_stream_completes(make: Callable[[int], Flux[int]]) -> None:
    ts = TestSubscriber[int](initial_request=1)
    make(0).subscribe(ts)
    await ts.wait_terminated()
    ts.assert_no_values().assert_complete()


@sources
async def test_rule_1_7_nothing_after_complete(make: Callable[[int], Flux[int]]) -> None:
    ts = TestSubscriber[int](initial_request=10)
    make(1).subscribe(ts)
    await ts.wait_terminated()
    ts.request(10)
    ts.cancel()
    await settle()
    ts.assert_values(0).assert_complete()


@sources
async def test_rule_1_9_none_subscriber_raises(make: Callable[[int], Flux[int]]) -> None:
    with pytest.raises(NullSignalError, match=r"rule 1\.9"):
        make(0).subscribe(None)  # type: ignore[call-overload]
    assert issubclass(NullSignalError, TypeError)


@sources
async def test_rule_1_9_on_subscribe_comes_first(make: Callable[[int], Flux[int]]) -> None:
    order: list[str] = []
    ts = TestSubscriber[int](initial_request=5)
    ts.on_next_callback = lambda _: order.append("next")
    make(2).subscribe(ts)
    assert ts.subscription is not None
    order.insert(0, "subscribe")
    await ts.wait_terminated()
    assert ts.subscriptions == 1
    assert order[0] == "subscribe"


@sources
async def test_rule_1_10_same_subscriber_twice_is_refused(make: Callable[[int], Flux[int]]) -> None:
    ts = TestSubscriber[int]()
    make(3).subscribe(ts)
    make(3).subscribe(ts)
    assert ts.subscriptions == 2  # the refusal's on_subscribe, cancelled by the subscriber (2.5)
    ts.assert_error(ProtocolViolationError, match="rules 1.10 and 2.12")
    ts.request(10)  # the first subscription was cancelled with the refusal
    await settle()
    ts.assert_no_values()


@sources
async def test_rule_3_2_request_inside_on_subscribe_and_on_next(
    make: Callable[[int], Flux[int]],
) -> None:
    ts = TestSubscriber[int](initial_request=1)
    ts.on_next_callback = lambda _: ts.request(1)
    make(6).subscribe(ts)
    await ts.wait_terminated()
    ts.assert_values(0, 1, 2, 3, 4, 5).assert_complete()


@sources
async def test_rule_3_3_recursion_depth_is_one(make: Callable[[int], Flux[int]]) -> None:
    ts = TestSubscriber[int](initial_request=1)
    ts.on_next_callback = lambda _: ts.request(1)
    make(3000).subscribe(ts)
    await ts.wait_terminated()
    ts.assert_value_count(3000).assert_max_depth(1)


@sources
async def test_rule_3_6_request_after_cancel_is_a_nop(make: Callable[[int], Flux[int]]) -> None:
    ts = TestSubscriber[int]()
    make(3).subscribe(ts)
    ts.cancel()
    ts.request(1).request(1).request(1)
    await settle()
    ts.assert_no_values().assert_not_terminated()


@sources
async def test_rule_3_7_cancel_after_cancel_is_a_nop(make: Callable[[int], Flux[int]]) -> None:
    ts = TestSubscriber[int]()
    make(1).subscribe(ts)
    ts.cancel().cancel().cancel()
    await settle()
    ts.assert_no_values().assert_not_terminated()


@sources
async def test_rule_3_8_request_is_additive(make: Callable[[int], Flux[int]]) -> None:
    ts = TestSubscriber[int]()
    make(10).subscribe(ts)
    ts.request(1).request(2).request(3)
    await ts.wait_for_values(6)
    await settle()
    ts.assert_values(0, 1, 2, 3, 4, 5)
    ts.cancel()


@sources
@pytest.mark.parametrize("bad", [0, -1, -(2**31 - 1)])
async def test_rule_3_9_non_positive_request_signals_error(
    make: Callable[[int], Flux[int]], bad: int
) -> None:
    ts = TestSubscriber[int]()
    make(10).subscribe(ts)
    ts.request(bad)  # returns normally (rule 3.16)
    await ts.wait_terminated()
    ts.assert_error(NonPositiveRequestError, match="rule 3.9").assert_no_values()
    assert isinstance(ts.errors[0], ValueError)
    assert str(bad) in str(ts.errors[0])


@sources
async def test_rule_3_9_error_from_inside_on_next_is_not_nested(
    make: Callable[[int], Flux[int]],
) -> None:
    ts = TestSubscriber[int](initial_request=5)
    ts.on_next_callback = lambda _: ts.request(0)
    make(10).subscribe(ts)
    await ts.wait_terminated()
    ts.assert_values(0).assert_error(NonPositiveRequestError).assert_max_depth(1)


@sources
async def test_rule_3_12_cancel_stops_signals(make: Callable[[int], Flux[int]]) -> None:
    ts = TestSubscriber[int](initial_request=15)
    ts.on_next_callback = lambda item: ts.cancel() if item == 2 else None
    make(20).subscribe(ts)
    await settle()
    ts.assert_values(0, 1, 2).assert_not_terminated()


@sources
async def test_rule_3_13_cancel_drops_the_subscriber(make: Callable[[int], Flux[int]]) -> None:
    flux = make(100)

    def subscribe_and_cancel() -> weakref.ref[TestSubscriber[int]]:
        ts = TestSubscriber[int](initial_request=1)
        flux.subscribe(ts)
        ts.cancel()
        return weakref.ref(ts)

    ref = subscribe_and_cancel()
    await settle()
    gc.collect()
    assert ref() is None


@sources
async def test_rule_3_17_unbounded_demand(make: Callable[[int], Flux[int]]) -> None:
    ts = TestSubscriber[int]()
    make(3).subscribe(ts)
    ts.request(MAX_DEMAND // 2).request(MAX_DEMAND // 2).request(1)
    await ts.wait_terminated()
    ts.assert_values(0, 1, 2).assert_complete()


@sources
async def test_rule_3_17_demand_beyond_max_saturates(make: Callable[[int], Flux[int]]) -> None:
    ts = TestSubscriber[int](initial_request=1)
    ts.on_next_callback = lambda _: ts.request(MAX_DEMAND - 1)
    make(10).subscribe(ts)
    await ts.wait_terminated()
    ts.assert_value_count(10).assert_complete()


async def test_rule_1_4_error_source_signals_on_error() -> None:
    ts = TestSubscriber[int]()
    Flux.error(KeyError("boom")).subscribe(ts)
    ts.assert_error(KeyError, match="boom")


async def test_rule_1_4_failing_iterator_signals_on_error_after_good_items() -> None:
    def items() -> list[int]:
        raise RuntimeError("broken source")

    def gen() -> object:
        yield 1
        yield 2
        raise RuntimeError("broken source")

    ts = TestSubscriber[int](initial_request=10)
    Flux.from_iterable(gen()).subscribe(ts)  # type: ignore[arg-type]
    ts.assert_values(1, 2).assert_error(RuntimeError, match="broken source")
    ts2 = TestSubscriber[int](initial_request=1)
    Flux.defer(items).subscribe(ts2)  # type: ignore[arg-type]
    ts2.assert_error(RuntimeError)


async def test_rule_2_13_none_item_is_an_error_after_good_items() -> None:
    ts = TestSubscriber[int](initial_request=10)
    Flux.just(1, None, 2).subscribe(ts)  # type: ignore[arg-type]
    ts.assert_values(1).assert_error(NullSignalError, match="item #1")


@pytest.mark.parametrize("sized", [True, False], ids=["list", "generator"])
@pytest.mark.parametrize("fused", [False, True], ids=["plain", "fused"])
async def test_rule_2_13_none_item_names_its_position(sized: bool, fused: bool) -> None:
    items = [0, 1, 2, None, 4]
    flux = Flux.from_iterable(items if sized else iter(items))
    if fused:
        flux = flux.map(lambda x: x)
    ts = TestSubscriber[int | None](initial_request=2)
    flux.subscribe(ts)
    ts.assert_values(0, 1).assert_not_terminated()
    ts.request(5)
    ts.assert_values(0, 1, 2).assert_error(NullSignalError, match="item #3 ")


async def test_rule_2_13_async_iterable_yielding_none_is_an_error() -> None:
    async def gen() -> AsyncIterator[int | None]:
        yield 1
        yield None

    ts = TestSubscriber[int | None](initial_request=10)
    Flux.from_async_iterable(gen()).subscribe(ts)
    await ts.wait_terminated()
    ts.assert_values(1).assert_error(NullSignalError)


async def test_never_signals_nothing_but_honours_rule_3_9() -> None:
    ts = TestSubscriber[int](initial_request=5)
    Flux.never().subscribe(ts)
    await settle()
    ts.assert_no_values().assert_not_terminated()
    ts.request(0)
    ts.assert_error(NonPositiveRequestError)


async def test_empty_completes_without_demand() -> None:
    ts = TestSubscriber[int]()
    Flux.empty().subscribe(ts)
    ts.assert_complete()


async def test_defer_builds_a_publisher_per_subscriber() -> None:
    calls: list[int] = []

    def factory() -> Publisher[int]:
        calls.append(1)
        return Flux.just(len(calls))

    flux = Flux.defer(factory)
    assert await flux.to_list() == [1]
    assert await flux.to_list() == [2]


async def test_defer_factory_returning_garbage_is_an_error() -> None:
    ts = TestSubscriber[int](initial_request=1)
    Flux.defer(lambda: None).subscribe(ts)  # type: ignore[arg-type, return-value]
    ts.assert_error(TypeError, match="not a Publisher")


async def test_from_async_iterable_pulls_only_as_requested() -> None:
    pulled: list[int] = []

    async def gen() -> AsyncIterator[int]:
        for i in range(100):
            pulled.append(i)
            yield i

    ts = TestSubscriber[int]()
    Flux.from_async_iterable(gen()).subscribe(ts)
    await settle()
    assert pulled == []
    ts.request(3)
    await ts.wait_for_values(3)
    await settle()
    assert pulled == [0, 1, 2]
    ts.cancel()


async def test_from_async_iterable_cancel_closes_the_iterator() -> None:
    closed = asyncio.Event()

    async def gen() -> AsyncIterator[int]:
        try:
            i = 0
            while True:
                yield i
                i += 1
        finally:
            closed.set()

    ts = TestSubscriber[int](initial_request=2)
    Flux.from_async_iterable(gen()).subscribe(ts)
    await ts.wait_for_values(2)
    ts.cancel()
    async with asyncio.timeout(2):
        await closed.wait()


async def test_from_async_iterable_cancel_before_any_request_closes_it() -> None:
    closed = asyncio.Event()

    class Iterable:
        def __aiter__(self) -> Iterable:
            return self

        async def __anext__(self) -> int:
            return 1

        async def aclose(self) -> None:
            closed.set()

    ts = TestSubscriber[int]()
    Flux.from_async_iterable(Iterable()).subscribe(ts)
    ts.cancel()
    async with asyncio.timeout(2):
        await closed.wait()


def test_from_async_iterable_without_a_loop_is_an_error() -> None:
    ts = TestSubscriber[int](initial_request=1)
    Flux.from_async_iterable(_agen(3)).subscribe(ts)
    ts.assert_error(RuntimeError, match="running event loop")
