"""flat_map, flat_map_sequential, concat_map: demand, prefetch, concurrency, errors, cancel."""

from __future__ import annotations

import asyncio
import gc
import threading
import weakref
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, assert_type

import pytest
from hypothesis import given, settings, strategies as st

from reactive_aio import MAX_DEMAND, Flux, NullSignalError, Publisher
from reactive_aio.lowlevel import DRAIN_BATCH
from reactive_aio.testing import ProtocolChecker, TestSubscriber, checked

from ._probe import Probe


def test_flat_map_waits_for_demand_then_emits_exactly_what_was_requested() -> None:
    ts = TestSubscriber[int]()
    Flux.range(0, 3).flat_map(lambda x: Flux.range(10 * x, 2)).subscribe(ts)
    ts.assert_no_values()
    ts.request(1)
    ts.assert_value_count(1).assert_not_terminated()
    ts.request(MAX_DEMAND)
    assert sorted(ts.values) == [0, 1, 10, 11, 20, 21]
    ts.assert_complete().assert_max_depth(1)


def test_flat_map_bounds_outer_demand_by_concurrency_and_inner_by_prefetch() -> None:
    outer = Probe(Flux.range(0, 100))
    inners: list[Probe[int]] = []

    def inner(x: int) -> Publisher[int]:
        probe = Probe(Flux.range(x, 1000))
        inners.append(probe)
        return probe

    ts = TestSubscriber[int]()
    Flux(outer).flat_map(inner, concurrency=3, prefetch=8).subscribe(ts)
    assert outer.requests == [3]
    assert [p.requests for p in inners] == [[8], [8], [8]]
    ts.request(6)  # taken round-robin; no inner has consumed three quarters yet
    assert ts.values == [0, 1, 2, 3, 4, 5] or len(ts.values) == 6
    assert all(p.requested <= 8 + 6 for p in inners)


def test_flat_map_requests_a_new_outer_item_when_an_inner_completes() -> None:
    outer = Probe(Flux.range(0, 5))
    ts = TestSubscriber[int](initial_request=MAX_DEMAND)
    Flux(outer).flat_map(lambda x: Flux.just(x), concurrency=2).subscribe(ts)
    assert sorted(ts.values) == [0, 1, 2, 3, 4]
    ts.assert_complete()
    assert outer.requests[0] == 2
    assert sum(outer.requests) <= 5 + 2


def test_flat_map_cancel_cancels_outer_and_every_inner() -> None:
    outer = Probe(Flux.never())
    inner_probes = [Probe(Flux.never()) for _ in range(3)]
    source = Probe(Flux.range(0, 3))
    ts = TestSubscriber[int](initial_request=5)
    Flux.merge(source, outer).flat_map(lambda i: inner_probes[i]).subscribe(ts)
    ts.cancel()
    assert [p.cancels for p in inner_probes] == [1, 1, 1]
    assert outer.cancels == 1


def test_flat_map_raising_function_cancels_everything_then_errors() -> None:
    outer = Probe(Flux.range(0, 10))
    pending = Probe(Flux.never())

    def fn(x: int) -> Publisher[int]:
        if x == 2:
            raise ValueError("bad item 2")
        return pending if x == 1 else Flux.just(x)

    ts = TestSubscriber[int](initial_request=10)
    Flux(outer).flat_map(fn).subscribe(ts)
    ts.assert_values(0).assert_error(ValueError, match="bad item 2")
    assert outer.cancels == 1
    assert pending.cancels == 1


def test_flat_map_upstream_error() -> None:
    ts = TestSubscriber[int](initial_request=10)
    Flux.concat(Flux.just(1), Flux.error(OSError("down"))).flat_map(Flux.just).subscribe(ts)
    ts.assert_values(1).assert_error(OSError, match="down")


def test_flat_map_inner_error_cancels_outer_and_siblings() -> None:
    outer = Probe(Flux.range(0, 3))
    sibling = Probe(Flux.never())
    inners: list[Publisher[int]] = [sibling, Flux.error(OSError("inner")), Flux.just(9)]
    ts = TestSubscriber[int](initial_request=10)
    Flux(outer).flat_map(lambda i: inners[i]).subscribe(ts)
    ts.assert_error(OSError, match="inner")
    assert sibling.cancels == 1
    assert outer.cancels == 1


def test_flat_map_rejects_what_it_cannot_flatten() -> None:
    ts = TestSubscriber[int](initial_request=1)
    Flux.just(1).flat_map(lambda x: [x]).subscribe(ts)  # type: ignore[arg-type, return-value]
    ts.assert_error(TypeError, match="must return a Publisher, an async iterable or an awaitable")
    ts2 = TestSubscriber[int](initial_request=1)
    Flux.just(1).flat_map(lambda x: None).subscribe(ts2)  # type: ignore[arg-type, return-value]
    ts2.assert_error(NullSignalError, match="returned None")


def test_flat_map_rejects_bad_sizes() -> None:
    with pytest.raises(ValueError, match="concurrency"):
        Flux.just(1).flat_map(Flux.just, concurrency=0)
    with pytest.raises(ValueError, match="prefetch"):
        Flux.just(1).flat_map(Flux.just, prefetch=0)


async def test_flat_map_accepts_async_iterables_and_awaitables() -> None:
    async def twice(x: int) -> AsyncIterator[int]:
        yield x
        yield x

    async def later(x: int) -> int:
        await asyncio.sleep(0)
        return x * 10

    assert sorted(await Flux.range(0, 3).flat_map(twice).to_list()) == [0, 0, 1, 1, 2, 2]
    assert sorted(await Flux.range(0, 3).flat_map(later).to_list()) == [0, 10, 20]


async def test_flat_map_awaitable_error_and_none() -> None:
    async def boom(x: int) -> int:
        raise OSError(f"no {x}")

    async def nothing(x: int) -> int | None:
        return None

    ts = TestSubscriber[int](initial_request=5)
    Flux.just(1).flat_map(boom).subscribe(ts)
    await ts.wait_terminated()
    ts.assert_error(OSError, match="no 1")
    ts2 = TestSubscriber[int | None](initial_request=5)
    Flux.just(1).flat_map(nothing).subscribe(ts2)
    await ts2.wait_terminated()
    ts2.assert_error(NullSignalError, match="returned None")


async def test_flat_map_cancel_cancels_pending_coroutines() -> None:
    started = asyncio.Event()
    cancelled = asyncio.Event()

    async def slow(x: int) -> int:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return x

    ts = TestSubscriber[int](initial_request=1)
    Flux.just(1).flat_map(slow).subscribe(ts)
    await started.wait()
    ts.cancel()
    await cancelled.wait()
    ts.assert_no_values().assert_not_terminated()


async def test_flat_map_merges_by_arrival() -> None:
    gates = [asyncio.Event() for _ in range(3)]

    async def wait_gate(i: int) -> int:
        await gates[i].wait()
        return i

    ts = TestSubscriber[int](initial_request=10)
    Flux.range(0, 3).flat_map(wait_gate).subscribe(ts)
    gates[2].set()
    await ts.wait_for_values(1)
    gates[0].set()
    await ts.wait_for_values(2)
    gates[1].set()
    await ts.wait_terminated()
    ts.assert_values(2, 0, 1).assert_complete()


async def test_flat_map_sequential_emits_in_outer_order() -> None:
    gates = [asyncio.Event() for _ in range(3)]
    started = [asyncio.Event() for _ in range(3)]

    async def wait_gate(i: int) -> int:
        started[i].set()
        await gates[i].wait()
        return i

    ts = TestSubscriber[int](initial_request=10)
    Flux.range(0, 3).flat_map_sequential(wait_gate, concurrency=3).subscribe(ts)
    gates[2].set()
    gates[1].set()
    for event in started:
        await event.wait()
    for _ in range(5):
        await asyncio.sleep(0)  # not a synchronisation: 1 and 2 are free to arrive; they must not
    ts.assert_no_values()  # 1 and 2 are ready but wait for 0
    gates[0].set()
    await ts.wait_terminated()
    ts.assert_values(0, 1, 2).assert_complete()


def test_flat_map_sequential_demand_and_order() -> None:
    ts = TestSubscriber[int]()
    Flux.range(0, 3).flat_map_sequential(lambda x: Flux.range(10 * x, 3)).subscribe(ts)
    ts.assert_no_values()
    ts.request(1)
    ts.assert_values(0)
    ts.request(MAX_DEMAND)
    ts.assert_values(0, 1, 2, 10, 11, 12, 20, 21, 22).assert_complete()


def test_flat_map_sequential_inner_error_while_waiting_its_turn() -> None:
    first = Probe(Flux.never())
    ts = TestSubscriber[int](initial_request=1)
    sources: list[Publisher[int]] = [first, Flux.error(OSError("second"))]
    Flux.range(0, 2).flat_map_sequential(lambda i: sources[i]).subscribe(ts)
    ts.assert_error(OSError, match="second")
    assert first.cancels == 1


def test_concat_map_subscribes_one_inner_at_a_time_in_order() -> None:
    outer = Probe(Flux.range(0, 3))
    inners = [Probe(Flux.range(10 * i, 2)) for i in range(3)]
    ts = TestSubscriber[int]()
    Flux(outer).concat_map(lambda i: inners[i], prefetch=4).subscribe(ts)
    assert outer.requests == [1]
    assert [p.subscribed for p in inners] == [1, 0, 0]
    ts.request(1)
    ts.assert_values(0)
    ts.request(2)
    ts.assert_values(0, 1, 10)
    assert [p.subscribed for p in inners] == [1, 1, 0]
    ts.request(10)
    ts.assert_values(0, 1, 10, 11, 20, 21).assert_complete()


def test_concat_map_raising_function_and_upstream_error() -> None:
    outer = Probe(Flux.range(0, 5))
    ts = TestSubscriber[int](initial_request=10)
    Flux(outer).concat_map(lambda x: Flux.just(10 // (x - 2))).subscribe(ts)
    ts.assert_values(-5, -10).assert_error(ZeroDivisionError)
    assert outer.cancels == 1
    ts2 = TestSubscriber[int](initial_request=10)
    Flux.error(OSError("down")).concat_map(Flux.just).subscribe(ts2)
    ts2.assert_error(OSError)


def test_concat_map_cancel_cancels_inner_and_outer() -> None:
    outer = Probe(Flux.range(0, 5))
    inner = Probe(Flux.never())
    ts = TestSubscriber[int](initial_request=3)
    Flux(outer).concat_map(lambda _: inner).subscribe(ts)
    ts.cancel()
    assert (outer.cancels, inner.cancels) == (1, 1)


def test_concat_map_inner_error() -> None:
    ts = TestSubscriber[int](initial_request=10)
    Flux.range(0, 3).concat_map(
        lambda x: Flux.error(OSError("inner")) if x == 1 else Flux.just(x)
    ).subscribe(ts)
    ts.assert_values(0).assert_error(OSError, match="inner")


@pytest.mark.parametrize("op", ["flat_map", "flat_map_sequential", "concat_map"])
def test_an_inner_failing_on_the_re_request_of_its_last_item_fails_the_stream(op: str) -> None:
    # With prefetch=1, taking the inner's one queued item re-requests it inside the drain's
    # pass; the inner fails right there, and the pass, seeing every inner and the outer
    # source done, must not complete over that error (it used to, and report it as late).
    def failing(x: int) -> Iterator[int]:
        yield x
        raise OSError(f"inner {x} failed")

    def inner(x: int) -> Flux[int]:
        return Flux.defer(lambda: Flux.from_iterable(failing(x)))  # subscribed, not pulled

    flux = Flux.range(0, 1)
    if op == "flat_map":
        flux = flux.flat_map(inner, concurrency=1, prefetch=1)
    elif op == "flat_map_sequential":
        flux = flux.flat_map_sequential(inner, concurrency=1, prefetch=1)
    else:
        flux = flux.concat_map(inner, prefetch=1)
    ts = TestSubscriber[int]()
    flux.subscribe(ts)
    ts.request(MAX_DEMAND)
    ts.assert_values(0).assert_error(OSError, match="inner 0 failed")


async def test_an_outer_error_while_a_pulled_inner_spends_the_pass_is_signalled() -> None:
    # The inner's fused filter drops more than a pass may take; as it ends, flat_map asks
    # for the next outer item, whose map raises: that error came during a pass that ran out
    # of budget, and the drain used to yield (no resume: it was done) without signalling it.
    gap = 2 * DRAIN_BATCH + 1

    def check(x: int) -> int:
        if x == 2:
            raise OSError("outer 2 failed")
        return x

    def sparse(x: int) -> Flux[int]:
        return Flux.range(0, gap).filter(lambda i: i == gap - 1).map(lambda _: x)

    flux = Flux.from_iterable([0, 1, 2]).map(check).flat_map(sparse, concurrency=2)
    async with asyncio.timeout(10):
        with pytest.raises(OSError, match="outer 2 failed"):
            await flux.to_list()


@pytest.mark.parametrize("op", ["flat_map", "flat_map_sequential", "concat_map"])
async def test_protocol_checker_sees_no_violation(op: str) -> None:
    flux = Flux.range(0, 50)
    mapped = getattr(flux, op)(lambda x: checked(Flux.range(x, 5)))
    ts = TestSubscriber[int](initial_request=1)
    ts.on_next_callback = lambda _: ts.request(1)
    checked(mapped).subscribe(ts)
    await ts.wait_terminated()
    ts.assert_value_count(250).assert_complete().assert_max_depth(1)


async def test_long_one_at_a_time_chain_keeps_depth_one() -> None:
    ts = TestSubscriber[int](initial_request=1)
    ts.on_next_callback = lambda _: ts.request(1)
    Flux.range(0, 2000).flat_map(lambda x: Flux.range(x, 10), concurrency=4).subscribe(ts)
    await ts.wait_terminated(timeout=30)
    ts.assert_value_count(20_000).assert_complete().assert_max_depth(1)


def test_flat_map_downstream_raising_cancels_everything_and_is_reported(
    caplog: pytest.LogCaptureFixture,
) -> None:
    outer = Probe(Flux.range(0, 3))
    inner = Probe(Flux.range(0, 10))

    def explode(_: int) -> None:
        raise RuntimeError("subscriber bug")

    ts = TestSubscriber[int](initial_request=5, on_next_callback=explode)
    Flux(outer).flat_map(lambda _: inner).subscribe(ts)
    ts.assert_value_count(1).assert_not_terminated()
    assert outer.cancels == 1
    assert inner.cancels >= 1
    assert "rule 2.13" in caplog.text


def test_flat_map_drops_the_subscriber_after_cancel() -> None:
    ts = TestSubscriber[int](initial_request=1)
    Flux.range(0, 3).flat_map(lambda x: Flux.never()).subscribe(ts)
    ref = weakref.ref(ts)
    ts.cancel()
    del ts
    gc.collect()
    assert ref() is None  # rule 3.13


async def test_flat_map_requests_from_another_thread() -> None:
    ts = TestSubscriber[int]()
    Flux.range(0, 100).flat_map(lambda x: Flux.range(10 * x, 10), concurrency=4).subscribe(ts)

    def ask() -> None:
        for _ in range(1000):
            ts.request(1)

    thread = threading.Thread(target=ask)
    thread.start()
    await asyncio.to_thread(thread.join)
    await ts.wait_terminated()
    ts.assert_value_count(1000).assert_complete().assert_max_depth(1)
    assert ts.threads == {threading.get_ident()}


def test_flat_map_fast_path_keeps_exact_demand_with_reentrant_requests() -> None:
    ts = TestSubscriber[int](initial_request=1)
    ts.on_next_callback = lambda v: ts.request(2) if v % 3 == 0 else None
    Flux.range(0, 50).flat_map(lambda x: Flux.just(x), concurrency=2).subscribe(ts)
    # every item that is a multiple of 3 asked for two more: count what demand allowed
    allowed = 1
    for v in ts.values:
        allowed += 2 if v % 3 == 0 else 0
    assert len(ts.values) == min(allowed, 50)
    ts.assert_max_depth(1)


async def test_flat_map_cancelling_before_coroutines_start_leaves_none_unawaited() -> None:
    async def value(x: int) -> int:
        return x

    assert await Flux.range(0, 10).flat_map(value).take(1).to_list() in ([x] for x in range(10))
    ts = TestSubscriber[int]()
    ts.on_next_callback = lambda _: ts.cancel()
    Flux.range(0, 10).flat_map(value).subscribe(ts)
    ts.cancel()
    for _ in range(3):
        await asyncio.sleep(0)  # lets the cancelled tasks finish; a leak would warn (error)
    gc.collect()


def test_flat_map_delay_errors_lets_the_others_finish() -> None:
    inners: list[Publisher[int]] = [
        Flux.concat(Flux.just(1), Flux.error(OSError("first"))),
        Flux.range(10, 3),
        Flux.error(ValueError("second")),
    ]
    ts = TestSubscriber[int](initial_request=100)
    Flux.range(0, 3).flat_map(lambda i: inners[i], delay_errors=True).subscribe(ts)
    assert sorted(ts.values) == [1, 10, 11, 12]
    ts.assert_error(ExceptionGroup)
    group = ts.errors[0]
    assert isinstance(group, ExceptionGroup)
    assert [type(e) for e in group.exceptions] == [OSError, ValueError]


def test_flat_map_delay_errors_single_error_waits_for_demand() -> None:
    ts = TestSubscriber[int]()
    sources: list[Publisher[int]] = [Flux.error(OSError("x")), Flux.range(0, 3)]
    Flux.range(0, 2).flat_map(lambda i: sources[i], delay_errors=True).subscribe(ts)
    ts.assert_not_terminated()
    ts.request(3)
    ts.assert_values(0, 1, 2).assert_error(OSError, match="x")


def test_flat_map_delay_errors_raising_function_stops_the_outer() -> None:
    outer = Probe(Flux.range(0, 10))
    ts = TestSubscriber[int](initial_request=100)
    Flux(outer).flat_map(lambda x: Flux.just(10 // (x - 2)), delay_errors=True).subscribe(ts)
    ts.assert_values(-5, -10).assert_error(ZeroDivisionError)
    assert outer.cancels == 1


def test_concat_map_and_concat_delay_errors() -> None:
    ts = TestSubscriber[int](initial_request=100)
    Flux.range(0, 3).concat_map(
        lambda x: Flux.error(OSError("one")) if x == 1 else Flux.just(x), delay_errors=True
    ).subscribe(ts)
    ts.assert_values(0, 2).assert_error(OSError, match="one")
    ts2 = TestSubscriber[int](initial_request=100)
    Flux.concat(Flux.error(OSError("a")), Flux.just(5), delay_errors=True).subscribe(ts2)
    ts2.assert_values(5).assert_error(OSError, match="a")
    ts3 = TestSubscriber[int](initial_request=100)
    Flux.merge(Flux.error(OSError("m")), Flux.just(6), delay_errors=True).subscribe(ts3)
    ts3.assert_values(6).assert_error(OSError, match="m")
    ts4 = TestSubscriber[int](initial_request=100)
    Flux.concat(Flux.just(1), Flux.error(OSError("b"))).flat_map_sequential(
        Flux.just, delay_errors=True
    ).subscribe(ts4)
    ts4.assert_values(1).assert_error(OSError, match="b")


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 6), min_size=0, max_size=6),
    concurrency=st.integers(1, 4),
    prefetch=st.integers(1, 5),
    requests=st.lists(st.integers(1, 7), min_size=1, max_size=12),
    op=st.sampled_from(["flat_map", "flat_map_sequential", "concat_map"]),
)
def test_any_demand_schedule_gets_exactly_the_items(
    sizes: list[int], concurrency: int, prefetch: int, requests: list[int], op: str
) -> None:
    checker = ProtocolChecker(report=False)
    expected = [10 * i + j for i, size in enumerate(sizes) for j in range(size)]

    def inner(i: int) -> Publisher[int]:
        return checked(Flux.range(10 * i, sizes[i]), checker=checker)

    source = Flux.range(0, len(sizes))
    if op == "flat_map":
        flux = source.flat_map(inner, concurrency=concurrency, prefetch=prefetch)
    elif op == "flat_map_sequential":
        flux = source.flat_map_sequential(inner, concurrency=concurrency, prefetch=prefetch)
    else:
        flux = source.concat_map(inner, prefetch=prefetch)
    ts = TestSubscriber[int]()
    checked(flux, checker=checker).subscribe(ts)
    asked = 0
    for n in requests:
        ts.request(n)
        asked += n
        assert len(ts.values) == min(asked, len(expected))  # exactly what was asked for
    ts.request(MAX_DEMAND)
    if op == "flat_map":
        assert sorted(ts.values) == expected
    else:
        assert ts.values == expected
    ts.assert_complete().assert_max_depth(1)
    checker.assert_clean()


def test_flattening_keeps_element_types() -> None:
    async def one(x: int) -> str:
        return str(x)

    async def many(x: int) -> AsyncIterator[bytes]:
        yield bytes(x)

    assert_type(Flux.range(0, 1).flat_map(one), Flux[str])
    assert_type(Flux.range(0, 1).concat_map(many), Flux[bytes])
    assert_type(Flux.range(0, 1).switch_map(lambda x: Flux.just(float(x))), Flux[float])
    assert_type(Flux.range(0, 1).map_in_thread(str), Flux[str])


# -- synchronous inners (range, from_iterable, just, fused chains): pulled, not subscribed ---


class _Counted:
    """An iterator over *items* that counts the ``next()`` calls made on it."""

    def __init__(self, items: list[Any], fail_at: int | None = None) -> None:
        self._items = items
        self._fail_at = fail_at
        self.pulls = 0

    def __iter__(self) -> _Counted:
        return self

    def __next__(self) -> Any:
        if self.pulls == self._fail_at:
            raise OSError(f"iterator broke at {self.pulls}")
        if self.pulls >= len(self._items):
            raise StopIteration
        self.pulls += 1
        return self._items[self.pulls - 1]


def _opaque(source: Flux[int]) -> Publisher[int]:
    """The same items, but not at hand: flat_map subscribes to it with a queue."""
    return Probe(source)


@pytest.mark.parametrize("op", ["flat_map", "flat_map_sequential", "concat_map"])
@pytest.mark.parametrize("size", [1, 3, 10, 32])
@pytest.mark.parametrize("step", [1, 3, 7])
async def test_sync_inners_interleave_exactly_as_subscribed_inners(
    op: str, size: int, step: int
) -> None:
    def run(inner: Callable[[int], Publisher[int]]) -> tuple[list[int], list[int]]:
        outer = Probe(Flux.range(0, 6))
        flux = Flux(outer)
        if op == "flat_map":
            flux = flux.flat_map(inner, concurrency=3)
        elif op == "flat_map_sequential":
            flux = flux.flat_map_sequential(inner, concurrency=3)
        else:
            flux = flux.concat_map(inner)
        ts = TestSubscriber[int]()
        flux.subscribe(ts)
        for _ in range(6 * size // step + 2):
            before = len(ts.values)
            ts.request(step)
            assert len(ts.values) - before <= step  # never more than requested
        ts.assert_complete()
        return ts.values, outer.requests

    def ranged(i: int) -> Flux[int]:
        return Flux.range(100 * i, size)

    pulled = run(ranged)
    subscribed = run(lambda i: _opaque(ranged(i)))
    assert pulled == subscribed
    assert sorted(pulled[0]) == sorted(x for i in range(6) for x in range(100 * i, 100 * i + size))


async def test_sync_inners_keep_the_outer_request_pattern() -> None:
    outer = Probe(Flux.range(0, 10))
    ts = TestSubscriber[int](initial_request=MAX_DEMAND)
    Flux(outer).flat_map(lambda i: Flux.range(10 * i, 10), concurrency=4).subscribe(ts)
    assert ts.values == list(range(100))  # each inner ends before the next outer item comes
    ts.assert_complete()
    assert outer.requests == [4] + [1] * 10


async def test_sync_inners_are_pulled_only_as_demand_allows() -> None:
    iterators = [_Counted(list(range(10 * i, 10 * i + 10))) for i in range(4)]
    outer = Probe(Flux.range(0, 4))
    ts = TestSubscriber[int]()
    Flux(outer).flat_map(lambda i: Flux.from_iterable(iterators[i]), concurrency=2).subscribe(ts)
    # without demand, each active inner looks one item ahead to learn whether it ended
    assert [it.pulls for it in iterators] == [1, 1, 0, 0]
    for taken in range(3, 43, 3):
        ts.request(3)
        assert len(ts.values) == min(taken, 40)
        # subscribed, each would have pulled a prefetch of 32 at once; pulled, each holds at
        # most one item ahead of what it emitted
        emitted = [sum(1 for x in ts.values if x // 10 == i) for i in range(4)]
        assert all(e <= it.pulls <= e + 1 for e, it in zip(emitted, iterators, strict=True))
    ts.assert_complete()
    assert sorted(ts.values) == list(range(40))
    assert outer.requests[0] == 2  # then as inners end (two may end in one pass)
    assert sum(outer.requests) == 4


async def test_a_generator_inner_completes_without_further_demand() -> None:
    ts = TestSubscriber[int]()
    Flux.just(1, 2).flat_map(lambda i: Flux.from_iterable(x for x in (i, i))).subscribe(ts)
    ts.request(4)
    ts.assert_values(1, 1, 2, 2).assert_complete()


async def test_a_none_from_a_sync_inner_fails_the_stream_and_cancels_upstream() -> None:
    outer = Probe(Flux.range(0, 5))
    ts = TestSubscriber[int | None](initial_request=MAX_DEMAND)
    Flux(outer).flat_map(lambda i: Flux.from_iterable([i, None, 7])).subscribe(ts)
    ts.assert_values(0).assert_error(NullSignalError, match="rule 2.13: item #1 of the iterable")
    assert outer.cancels == 1


async def test_a_none_found_looking_ahead_fails_the_stream() -> None:
    items = _Counted([1, 2, None, 4])
    ts = TestSubscriber[int](initial_request=2)
    Flux.just(0).flat_map(lambda _: Flux.from_iterable(items)).subscribe(ts)
    ts.assert_values(1, 2).assert_error(NullSignalError, match="item #2 of the iterable is None")
    assert items.pulls == 3


async def test_a_raising_mapper_cancels_upstream_then_errors_with_sync_inners() -> None:
    log: list[str] = []

    def fn(x: int) -> Flux[int]:
        if x == 2:
            raise ValueError("bad item 2")
        return Flux.range(10 * x, 2)

    ts = TestSubscriber[int](initial_request=MAX_DEMAND)
    outer = Flux.range(0, 10).do_on_cancel(lambda: log.append("outer cancelled"))
    outer.flat_map(fn).do_on_error(lambda e: log.append(f"error {e}")).subscribe(ts)
    ts.assert_values(0, 1, 10, 11).assert_error(ValueError, match="bad item 2")
    assert log == ["outer cancelled", "error bad item 2"]


async def test_a_raising_iterator_cancels_upstream_and_stops_the_other_inners() -> None:
    log: list[str] = []
    broken = _Counted([1, 2, 3], fail_at=2)
    sibling = _Counted(list(range(100, 200)))
    inners = [sibling, broken, _Counted([7])]
    ts = TestSubscriber[int]()
    outer = Flux.range(0, 3).do_on_cancel(lambda: log.append("outer cancelled"))
    outer.flat_map(lambda i: Flux.from_iterable(inners[i]), concurrency=2).do_on_error(
        lambda e: log.append(f"error {e}")
    ).subscribe(ts)
    ts.request(1)  # sibling emits 100 and holds 101 ahead; broken is not pulled yet
    ts.request(MAX_DEMAND)
    ts.assert_error(OSError, match="iterator broke at 2")
    assert log == ["outer cancelled", "error iterator broke at 2"]
    pulls = sibling.pulls
    assert 100 in ts.values
    assert [x for x in ts.values if x < 100] == [1, 2]
    await asyncio.sleep(0)
    assert sibling.pulls == pulls  # never advanced after the failure


async def test_delay_errors_lets_the_other_sync_inners_finish() -> None:
    inners = [_Counted([1, 2], fail_at=1), _Counted([10, 11, 12])]
    ts = TestSubscriber[int](initial_request=MAX_DEMAND)
    Flux.range(0, 2).flat_map(lambda i: Flux.from_iterable(inners[i]), delay_errors=True).subscribe(
        ts
    )
    ts.assert_values(1, 10, 11, 12).assert_error(OSError, match="broke at 1")


async def test_cancelling_mid_inner_stops_pulling_at_once() -> None:
    items = _Counted(list(range(100)))
    values = await Flux.just(0).flat_map(lambda _: Flux.from_iterable(items)).take(3).to_list()
    assert values == [0, 1, 2]
    assert items.pulls == 3

    cancelled_at: list[int] = []
    other = _Counted(list(range(100)))

    def cancel_on_third(item: int) -> None:
        if len(ts.values) == 3:
            cancelled_at.append(other.pulls)
            ts.cancel()

    ts = TestSubscriber[int](initial_request=MAX_DEMAND, on_next_callback=cancel_on_third)
    Flux.just(0).flat_map(lambda _: Flux.from_iterable(other)).subscribe(ts)
    ts.assert_values(0, 1, 2).assert_not_terminated()
    assert cancelled_at == [3]
    assert other.pulls == 3


async def test_fused_chains_as_inners_run_their_stages_lazily() -> None:
    calls: list[int] = []

    def double(x: int) -> int:
        calls.append(x)
        return 2 * x

    ts = TestSubscriber[str]()
    Flux.range(0, 3).flat_map(
        lambda i: Flux.range(10 * i, 10).map(double).filter(lambda x: x % 4 == 0).map(str),
        concurrency=1,
    ).subscribe(ts)
    assert calls == [0]  # one kept item looked ahead, to learn whether the inner ended
    ts.request(3)
    assert ts.values == ["0", "4", "8"]
    assert calls == [0, 1, 2, 3, 4, 5, 6]  # and the next kept one (6 -> 12) held ahead
    ts.request(MAX_DEMAND)
    assert ts.values == [str(2 * x) for x in range(30) if x % 2 == 0]
    ts.assert_complete()


async def test_fused_chain_inner_failures_name_the_rule_or_the_error() -> None:
    ts = TestSubscriber[object](initial_request=MAX_DEMAND)
    Flux.range(0, 3).flat_map(
        lambda i: Flux.range(i, 3).map(lambda x: None if x == 1 else x)
    ).subscribe(ts)
    ts.assert_values(0).assert_error(
        NullSignalError, match="map's function returned None for int 1"
    )

    def picky(x: int) -> bool:
        if x == 2:
            raise KeyError("no 2")
        return True

    ts2 = TestSubscriber[int](initial_request=MAX_DEMAND)
    Flux.range(0, 3).concat_map(lambda i: Flux.just(i, i + 1, i + 2).filter(picky)).subscribe(ts2)
    ts2.assert_values(0, 1).assert_error(KeyError, match="no 2")

    ts3 = TestSubscriber[int](initial_request=MAX_DEMAND)
    with_none: list[Any] = [5, None]
    Flux.just(0).flat_map(lambda _: Flux.from_iterable(with_none).map(lambda x: x + 1)).subscribe(
        ts3
    )
    ts3.assert_values(6).assert_error(NullSignalError, match="item #1 of the iterable is None")


async def test_empty_inners_end_without_demand_and_make_room() -> None:
    outer = Probe(Flux.range(0, 6))
    ts = TestSubscriber[int]()
    Flux(outer).flat_map(
        lambda i: Flux.just(i) if i % 3 == 0 else Flux.empty(), concurrency=2
    ).subscribe(ts)
    ts.assert_no_values()  # the empty ones ended without demand and made room for the next
    ts.request(1)
    ts.assert_values(0)
    ts.request(5)
    ts.assert_values(0, 3).assert_complete()
    assert outer.requests[0] == 2
    assert sum(outer.requests) >= 6
