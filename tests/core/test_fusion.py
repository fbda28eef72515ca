"""The fusion kit: a synchronous source pulled as an iterator by a drain (`SyncSource`,
`SyncInner.pull`), the code generated for fused chains (`fusion_source`), an async source read
by its awaiting consumer (`AsyncSource`: a fold, ``async for``), calls awaited one at a time over
a source at hand (`AwaitedCalls`, ``map_async``), and async fusion (an
`AsyncBoundarySubscriber` takes an async boundary's place with `fuse_boundary` and sends its
requests through a `DeferredSubscription`)."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
import traceback
from collections import UserList
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextlib import aclosing
from typing import Any

import attrs
import pytest

from reactive_aio import (
    MAX_DEMAND,
    Flux,
    NullSignalError,
    Publisher,
    Subscriber,
    Subscription,
    snapshot,
)
from reactive_aio.lowlevel import (
    DRAIN_BATCH,
    FOLD_TURN,
    AsyncBoundarySubscriber,
    AsyncSource,
    DeferredSubscription,
    LoopBound,
    QueueDrain,
    SyncInner,
    SyncSource,
    fuse_boundary,
    fusion_source,
)
from reactive_aio.testing import TestSubscriber

# -- a synchronous source pulled by a drain ----------------------------------------------


@attrs.frozen
class _Squares(Publisher[int], SyncSource[int]):
    """A source written with the kit alone: subscribing is not supported, pulling is."""

    count: int
    pulled: list[int] = attrs.field(factory=list)

    def subscribe(self, subscriber: Subscriber[int]) -> None:
        raise AssertionError("a sync source is pulled, not subscribed")

    def sync_iterator(self) -> Iterator[int]:
        return self._squares()

    def _squares(self) -> Iterator[int]:
        for i in range(self.count):
            self.pulled.append(i)
            yield i * i


@attrs.define(eq=False)
class _Drain(QueueDrain[int]):
    """The smallest owner: pulls one SyncInner's items and completes when it ends."""

    inner: SyncInner[int] | None = attrs.field(default=None, init=False)

    def _emit(self, limit: int) -> int:
        inner = self.inner
        assert inner is not None
        emitted = inner.pull(self, limit)
        if inner.done and not self._done:
            self._end()
        return emitted

    def _release(self) -> None:
        if self.inner is not None:
            self.inner.cancel()


def _drain(iterator: Iterator[Any]) -> tuple[TestSubscriber[int], _Drain]:
    ts = TestSubscriber[int]()
    drain = _Drain(ts)
    drain.inner = SyncInner(drain, iterator)
    drain.start()
    return ts, drain


def test_a_source_written_with_the_kit_is_pulled_by_flat_map() -> None:
    sources = [_Squares(3), _Squares(2)]
    ts = TestSubscriber[int](initial_request=2)
    Flux.range(0, 2).concat_map(lambda i: sources[i]).subscribe(ts)
    ts.assert_values(0, 1)
    assert sources[0].pulled == [0, 1, 2]  # the third looked ahead: the range cannot tell its end
    ts.request(10)
    ts.assert_values(0, 1, 4, 0, 1).assert_complete()


def test_what_flux_hands_over() -> None:
    assert list(Flux.range(3, 3).sync_iterator() or ()) == [3, 4, 5]
    assert list(Flux.just("a", "b").map(str.upper).sync_iterator() or ()) == ["A", "B"]
    fused = Flux.from_iterable([1, 2, 3, 4]).filter(lambda x: x % 2 == 0).map(lambda x: -x)
    assert list(fused.sync_iterator() or ()) == [-2, -4]
    assert Flux.never().sync_iterator() is None
    assert Flux.range(0, 3).take(2).sync_iterator() is None  # not a fusable stage


def _recorded(count: int, pulled: list[int]) -> Iterator[int]:
    """``0 … count - 1``, each appended to *pulled* as it is pulled."""
    for i in range(count):
        pulled.append(i)
        yield i


def test_the_drain_pulls_only_what_it_emits_and_looks_ahead_at_its_limit() -> None:
    pulled: list[int] = []
    ts, _ = _drain(_recorded(5, pulled))
    assert pulled == [0]  # no demand: one item ahead, to learn whether it ended
    ts.request(2)
    ts.assert_values(0, 1).assert_not_terminated()
    assert pulled == [0, 1, 2]
    ts.request(3)
    ts.assert_values(0, 1, 2, 3, 4).assert_complete()  # the end found without more demand


def test_a_sized_iterator_ends_without_looking_ahead() -> None:
    iterator = iter([1, 2])
    ts, drain = _drain(iterator)
    ts.request(2)
    ts.assert_values(1, 2).assert_complete()
    assert drain.inner is not None
    assert drain.inner.pulled == 2


def test_none_and_failures_go_to_the_owner() -> None:
    ts, drain = _drain(iter([1, None, 3]))
    ts.request(5)
    ts.assert_values(1).assert_error(NullSignalError, match="rule 2.13: item #1 of the iterable")
    assert drain.inner is not None
    assert drain.inner.done

    def broken() -> Iterator[int]:
        yield 1
        raise OSError("disk gone")

    ts2, _ = _drain(broken())
    ts2.request(5)
    ts2.assert_values(1).assert_error(OSError, match="disk gone")


def test_cancel_stops_pulling() -> None:
    pulled: list[int] = []
    ts, drain = _drain(_recorded(100, pulled))
    ts.request(3)
    ts.cancel()
    ts.request(10)
    ts.assert_values(0, 1, 2)
    assert pulled == [0, 1, 2, 3]
    assert drain.inner is not None
    assert drain.inner.iterator is None


@attrs.define
class _Underestimating:
    """``1 … count`` whose length hint says nothing is left: PEP 424 allows a guess."""

    count: int
    pulled: int = 0

    def __iter__(self) -> _Underestimating:
        return self

    def __next__(self) -> int:
        if self.pulled == self.count:
            raise StopIteration
        self.pulled += 1
        return self.pulled

    def __length_hint__(self) -> int:
        return 0


async def test_an_inner_ends_when_its_iterator_stops_not_when_its_length_hint_says_so() -> None:
    inner = Flux.from_iterable(_Underestimating(5))
    items = [x async for x in Flux.just(0).concat_map(lambda _: inner).iterate(prefetch=2)]
    assert items == [1, 2, 3, 4, 5]


# -- the generated code ------------------------------------------------------------------


def _double(x: int) -> int:
    return x * 2


def _even(x: int) -> bool:
    return x % 2 == 0


def test_fusion_source_shows_the_code_a_chain_ran() -> None:
    chain = Flux.range(0, 10).map(_double).filter(_even).map(_double)
    ts = TestSubscriber[int](initial_request=100)
    chain.subscribe(ts)
    ts.assert_complete()
    code = fusion_source(chain)
    assert "# <reactive_aio fusion: emit loop, shape (True, False, True)>" in code
    assert "v0 = fn0(item)" in code
    assert "if not fn1(v0):" in code
    assert list(chain.sync_iterator() or ()) == list(range(0, 40, 4))
    assert "<reactive_aio fusion: fused iterator, shape (True, False, True)>" in fusion_source(
        chain
    )
    assert fusion_source(Flux.range(0, 3)) == ""  # not a fused chain
    assert fusion_source(Flux.range(0, 3).map(str).take(1)) == ""


def test_a_traceback_through_generated_code_shows_its_lines() -> None:
    def fail(x: int) -> int:
        raise ValueError(f"no {x}")

    ts = TestSubscriber[int](initial_request=100)
    Flux.range(0, 3).filter(_even).map(fail).subscribe(ts)
    ts.assert_error(ValueError, match="no 0")
    error = ts.errors[0]
    text = "".join(traceback.format_exception(error))
    assert '"<reactive_aio fusion: emit loop, shape (False, True)>"' in text
    assert "v1 = fn1(item)" in text  # the generated line that called it


# -- a fold inside the chain's loop ------------------------------------------------------


def _add(acc: int, x: int) -> int:
    return acc + x


async def test_a_fold_over_a_fused_chain_runs_in_the_chain_s_loop() -> None:
    callers: set[str] = set()

    def add(acc: int, x: int) -> int:
        callers.add(sys._getframe(1).f_code.co_filename)
        return acc + x

    chain = Flux.range(0, 5000).map(_double).filter(lambda x: x % 3 == 0)
    assert await chain.reduce(add, 0) == sum(x for x in range(0, 10000, 2) if x % 3 == 0)
    fold = "<reactive_aio fusion: fold, shape (True, False)>"  # a range: no None check
    assert callers == {fold}  # called by the loop itself: no subscriber in between
    assert f"# {fold}" in fusion_source(chain)
    assert await Flux.from_iterable(iter(range(3000))).filter(_even).last() == 2998
    assert await Flux.just("a", "b").map(str.upper).to_list() == ["A", "B"]


async def test_a_fold_gives_the_loop_a_turn_and_stops_when_cancelled() -> None:
    ticks: list[int] = []
    loop = asyncio.get_running_loop()
    loop.call_soon(ticks.append, 1)
    seen: list[int] = []

    def record(acc: int, x: int) -> int:
        if x == DRAIN_BATCH - 1:
            time.sleep(FOLD_TURN)  # the first batch outlasts the fold's time between turns
        elif x == DRAIN_BATCH:
            seen.append(len(ticks))
        return acc + x

    assert await Flux.range(0, 5000).reduce(record, 0) == sum(range(5000))
    assert seen == [1]  # the callback ran before the second batch

    pulled: list[int] = []
    fold = Flux.from_iterable(_recorded(10**9, pulled)).to_list()
    assert await _cancelled_after_three_turns(fold, pulled) < 10**9


async def _cancelled_after_three_turns(fold: Awaitable[object], pulled: list[int]) -> int:
    """Await *fold* in a task for three turns of the loop, then cancel it: how many items it
    pulled (into *pulled*), which must be all it ever pulls."""
    task = asyncio.ensure_future(fold)
    for _ in range(3):
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    count = len(pulled)
    await asyncio.sleep(0)
    assert 0 < count == len(pulled)
    return count


async def test_a_fold_over_a_range_steps_through_it_and_stops_when_cancelled() -> None:
    seen: list[int] = []

    def record(acc: int, x: int) -> int:
        seen.append(x)
        return acc + x

    fold = Flux.range(0, 10**12).map(_double).reduce(record, 0)
    count = await _cancelled_after_three_turns(fold, seen)
    assert seen == list(range(0, 2 * count, 2))
    # from_iterable of a range folds its slices too: beyond a C long, with a step, backwards
    for items in (range(2**64, 2**64 + 3000, 3), range(5000, -1, -7), range(0)):
        assert await Flux.from_iterable(items).filter(_even).reduce(_add, 0) == sum(
            x for x in items if x % 2 == 0
        )


async def test_a_fold_fails_as_a_subscribed_one_does() -> None:
    def stop(acc: int, x: int) -> int:
        raise StopIteration

    with pytest.raises(RuntimeError, match="user code raised StopIteration") as raised:
        await Flux.range(0, 3).reduce(stop, 0)
    assert isinstance(raised.value.__cause__, StopIteration)
    with pytest.raises(NullSignalError, match="item #2 of the iterable is None"):
        await Flux.just(1, 2, None).map(lambda x: x).to_list()
    with pytest.raises(NullSignalError, match="returned None for int 1"):
        await Flux.range(0, 3).map(lambda x: None if x else x).to_list()
    with pytest.raises(ZeroDivisionError):
        await Flux.range(0, 3).filter(lambda x: 1 // (x - 2) > -5).to_list()


# -- an async source read by its awaiting consumer -----------------------------------------


@attrs.define(eq=False)
class _Awaited:
    """An async generator's items, what it was read by, and whether it was closed."""

    count: int
    items: list[int | None] | None = None
    """Yielded in place of ``range(count)`` when given (None among them)."""
    pulled: list[int | None] = attrs.field(factory=list)
    readers: set[asyncio.Task[Any] | None] = attrs.field(factory=set)
    closed: bool = False
    block: asyncio.Future[None] | None = None
    """Awaited before the first item, when given."""

    async def generate(self) -> AsyncIterator[Any]:
        try:
            if self.block is not None:
                await self.block
            for x in range(self.count) if self.items is None else self.items:
                self.readers.add(asyncio.current_task())
                self.pulled.append(x)
                yield x
        finally:
            self.closed = True

    def flux(self) -> Flux[Any]:
        return Flux.from_async_iterable(self.generate())


async def test_a_fold_over_an_async_source_runs_in_the_awaiting_task() -> None:
    callers: set[str] = set()

    def add(acc: int, x: int) -> int:
        callers.add(sys._getframe(1).f_code.co_filename)
        return acc + x

    source = _Awaited(3000)
    chain = source.flux().map(_double).filter(lambda x: x % 3 == 0)
    assert await chain.reduce(add, 0) == sum(x for x in range(0, 6000, 2) if x % 3 == 0)
    assert callers == {"<reactive_aio fusion: awaiting fold, shape (True, False)>"}
    assert source.readers == {asyncio.current_task()}
    assert source.closed
    assert await _Awaited(5).flux().filter(_even).to_list() == [0, 2, 4]
    assert await _Awaited(5).flux().last() == 4


async def test_async_for_over_an_async_source_reads_it_in_the_reader_s_task() -> None:
    source = _Awaited(10)
    seen = []
    async for x in source.flux().map(_double).filter(lambda x: x % 3 == 0):
        assert source.pulled[-1] == x // 2  # nothing read ahead
        seen.append(x)
    assert seen == [0, 6, 12, 18]
    assert source.readers == {asyncio.current_task()}
    assert source.closed


async def test_leaving_early_or_failing_closes_the_async_source_first() -> None:
    source = _Awaited(100)
    async with aclosing(source.flux().iterate(prefetch=1)) as items:
        async for x in items:
            if x == 3:
                break
    assert source.closed
    assert source.pulled == [0, 1, 2, 3]
    source = _Awaited(100)
    async for x in source.flux().map(_double):  # dropped: closed by the loop's finalizer
        if x == 4:
            break
    for _ in range(5):
        await asyncio.sleep(0)
    assert source.closed
    assert source.pulled == [0, 1, 2]

    def stop(x: int) -> int:
        if x == 2:
            raise StopIteration
        return x

    for consume in (
        lambda flux: flux.to_list(),
        lambda flux: _collected(flux),
    ):
        source = _Awaited(100)
        with pytest.raises(RuntimeError, match="user code raised StopIteration") as raised:
            await consume(source.flux().map(stop))
        assert source.closed
        assert source.pulled == [0, 1, 2]
        assert isinstance(raised.value.__cause__, StopIteration)
    source = _Awaited(100)

    def fail(acc: int, x: int) -> int:
        raise ValueError(x)

    with pytest.raises(ValueError, match="0"):
        await source.flux().reduce(fail, 0)
    assert source.closed


async def _collected(flux: Flux[Any]) -> list[Any]:
    return [x async for x in flux]


async def test_a_none_item_and_a_second_reader_fail_an_awaited_source() -> None:
    for consume in (lambda flux: flux.to_list(), _collected):
        source = _Awaited(0, items=[1, None, 3])
        with pytest.raises(NullSignalError, match="async iterable yielded None"):
            await consume(source.flux().map(_double))
        assert source.closed
        flux = _Awaited(3).flux()
        assert await consume(flux) == [0, 1, 2]
        with pytest.raises(RuntimeError, match="can be read once"):
            await consume(flux.filter(_even))

    class Refusing:
        def __aiter__(self) -> AsyncIterator[int]:
            raise StopAsyncIteration  # user code: a RuntimeError from it, not an empty stream

    with pytest.raises(RuntimeError, match="user code raised StopAsyncIteration"):
        await _collected(Flux.from_async_iterable(Refusing()))


async def test_cancelling_the_awaiting_task_closes_the_async_source() -> None:
    loop = asyncio.get_running_loop()
    for consume in (lambda flux: flux.to_list(), _collected):
        source = _Awaited(3, block=loop.create_future())
        task = asyncio.ensure_future(consume(source.flux().map(_double)))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert source.closed
        # cancelled by someone else: the stream fails, as the subscribed source's does
        source = _Awaited(3, block=loop.create_future())
        task = asyncio.ensure_future(consume(source.flux().map(_double)))
        await asyncio.sleep(0)
        assert source.block is not None
        source.block.cancel()
        with pytest.raises(RuntimeError, match="raised CancelledError although"):
            await task
        assert source.closed


async def test_a_subscriber_of_an_async_source_is_served_by_its_task_within_demand() -> None:
    source = _Awaited(20)
    ts = TestSubscriber[int](initial_request=2)
    source.flux().map(_double).filter(lambda x: x % 3 == 0).subscribe(ts)
    await ts.wait_until(lambda: len(ts.values) == 2, timeout=5)
    for _ in range(3):
        await asyncio.sleep(0)
    assert ts.values == [0, 6]
    assert source.pulled == [0, 1, 2, 3]  # drops cost no demand; nothing read beyond it
    assert asyncio.current_task() not in source.readers
    ts.request(1)
    await ts.wait_until(lambda: len(ts.values) == 3, timeout=5)
    ts.cancel()
    for _ in range(3):
        await asyncio.sleep(0)
    assert source.pulled == [0, 1, 2, 3, 4, 5, 6]
    assert source.closed
    ts = TestSubscriber[int](initial_request=100)
    source = _Awaited(5)
    source.flux().subscribe(ts)
    await ts.wait_terminated()
    ts.assert_values(0, 1, 2, 3, 4).assert_complete()
    assert source.closed


@pytest.mark.parametrize("batched", [False, True], ids=["items", "batches"])
async def test_a_subscribed_async_source_that_never_suspends_gives_the_loop_turns(
    batched: bool,
) -> None:
    ticks: list[int] = []
    seen: list[int] = []
    ts = TestSubscriber[int](initial_request=MAX_DEMAND)
    ts.on_next_callback = lambda x: seen.append(len(ticks)) if x == 4998 else None
    if batched:
        source = Flux.from_publisher(_Batches(5000, most=100, instant=True))
    else:
        source = _Awaited(5000).flux()
    source.filter(_even).subscribe(ts)  # its task is scheduled now
    asyncio.get_running_loop().call_soon(ticks.append, 1)  # and this after it
    await ts.wait_terminated()
    assert seen == [1]  # the callback ran before the last item went out


# -- calls awaited one at a time over a source at hand (map_async) -------------------------


async def _some_suspend(x: int) -> int:
    if x % 2:
        await asyncio.sleep(0)
    return x


async def test_a_fold_over_calls_at_hand_awaits_them_in_its_own_loop() -> None:
    callers: set[str] = set()
    tasks: set[asyncio.Task[Any] | None] = set()

    async def call(x: int) -> int:
        tasks.add(asyncio.current_task())
        return await _some_suspend(x)

    def add(acc: int, x: int) -> int:
        callers.add(sys._getframe(1).f_code.co_filename)
        return acc + x

    chain = Flux.range(0, 3000).map_async(call).map(_double).filter(lambda x: x % 3 == 0)
    assert await chain.reduce(add, 0) == sum(x for x in range(0, 6000, 2) if x % 3 == 0)
    assert callers == {"<reactive_aio fusion: awaiting fold of calls, shape (True, False)>"}
    assert tasks == {asyncio.current_task()}  # no task: the awaiting one awaits every call
    items = Flux.from_iterable(iter([3, 1, 2])).map(_double).map_async(call)
    assert await items.to_list() == [6, 2, 4]


async def test_a_fold_over_calls_that_never_suspend_gives_the_loop_turns() -> None:
    async def ready(x: int) -> int:
        return x

    ticks: list[int] = []
    seen: list[int] = []

    def record(acc: int, x: int) -> int:
        if x == 4999:
            seen.append(len(ticks))
        return acc + x

    for source in (Flux.range(0, 5000), Flux.from_iterable(iter(range(5000)))):
        ticks.clear()
        seen.clear()
        asyncio.get_running_loop().call_soon(ticks.append, 1)
        assert await source.map_async(ready).reduce(record, 0) == sum(range(5000))
        assert seen == [1]  # the callback ran before the fold's last item


async def test_a_fold_over_calls_fails_as_a_subscribed_one_does() -> None:
    async def fail_on_2(x: int) -> int:
        if x == 2:
            raise ValueError("bad item 2")
        return x

    async def nothing_for_1(x: int) -> int | None:
        return None if x == 1 else x

    def broken() -> Iterator[int]:
        yield 0
        raise OSError("source failed")

    with pytest.raises(ValueError, match="bad item 2"):
        await Flux.range(0, 5).map_async(fail_on_2).to_list()
    with pytest.raises(NullSignalError, match="map_async's function returned None for int 1"):
        await Flux.range(0, 5).map_async(nothing_for_1).to_list()
    with pytest.raises(OSError, match="source failed"):
        await Flux.from_iterable(broken()).map_async(_some_suspend).to_list()
    with pytest.raises(RuntimeError, match="map_async's function raised CancelledError although"):
        await Flux.range(0, 3).map_async(_cancelled_elsewhere).to_list()


async def _cancelled_elsewhere(x: int) -> int:
    future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    future.cancel()
    return await future


# -- an async source read a batch at a time ------------------------------------------------


@attrs.define(eq=False)
class _Batches(AsyncSource[int], LoopBound):
    """``range(count)`` a batch at a time, each as large as the reader wants (at most *most*),
    suspending for every batch unless *instant*; it records the wants, readers and batches."""

    count: int
    most: int = 8
    instant: bool = False
    fail_open: bool = False
    fail_after: int = -1
    """Raise once this many items were read (-1: never)."""
    kind: Callable[[list[int]], Sequence[int]] = list
    """What a batch is made as."""
    wants: list[int] = attrs.field(factory=list)
    readers: set[asyncio.Task[Any] | None] = attrs.field(factory=set)
    read: int = 0
    closed: bool = False

    def async_batches(self, want: Callable[[], int]) -> AsyncIterator[Sequence[int]]:
        return self._batches(want)

    async def _batches(self, want: Callable[[], int]) -> AsyncIterator[Sequence[int]]:
        try:
            while self.read < self.count:
                n = want()
                self.wants.append(n)
                self.readers.add(asyncio.current_task())
                if not self.instant:
                    await asyncio.sleep(0)
                if self.fail_open:
                    raise ConnectionError("cannot start")
                if self.read == self.fail_after:
                    raise ValueError("read failed")
                batch = list(range(self.read, min(self.count, self.read + min(n, self.most))))
                self.read += len(batch)
                yield self.kind(batch)
        finally:
            self.closed = True


async def test_a_subscriber_of_a_batched_source_gets_batches_sized_by_its_demand() -> None:
    source = _Batches(100)
    ts = TestSubscriber[int](initial_request=0)
    Flux.from_publisher(source).subscribe(ts)
    for _ in range(5):
        await asyncio.sleep(0)
    assert source.wants == [0]  # the first read, at subscribe, wants nothing
    ts.request(5)
    await ts.wait_until(lambda: len(ts.values) == 5, timeout=5)
    for _ in range(5):
        await asyncio.sleep(0)
    assert source.wants == [0, 5]
    assert source.read == 5
    assert asyncio.current_task() not in source.readers
    ts.request(20)
    await ts.wait_until(lambda: len(ts.values) == 25, timeout=5)
    for _ in range(5):
        await asyncio.sleep(0)
    assert source.read == 25  # never more than demand, in batches of at most 8
    assert all(0 <= want <= 20 for want in source.wants[2:])
    ts.request(MAX_DEMAND)
    await ts.wait_terminated()
    ts.assert_values(*range(100)).assert_complete()
    assert source.closed


async def test_a_batched_source_runs_the_stages_in_its_task_and_drops_cost_no_demand() -> None:
    source = _Batches(40)
    ts = TestSubscriber[int](initial_request=3)
    Flux.from_publisher(source).map(_double).filter(lambda x: x % 3 == 0).subscribe(ts)
    await ts.wait_until(lambda: len(ts.values) == 3, timeout=5)
    for _ in range(5):
        await asyncio.sleep(0)
    assert ts.values == [0, 6, 12]
    assert source.read <= 3 + 8  # what demand asked for, plus the drops of one batch
    ts.request(MAX_DEMAND)
    await ts.wait_terminated()
    assert ts.values == [x for x in range(0, 80, 2) if x % 3 == 0]


async def test_a_fold_and_async_for_read_a_batched_source_in_their_own_task() -> None:
    source = _Batches(50)
    assert await Flux.from_publisher(source).map(_double).reduce(lambda a, x: a + x, 0) == sum(
        range(0, 100, 2)
    )
    assert set(source.wants) == {MAX_DEMAND}  # the source bounds each batch
    assert source.readers == {asyncio.current_task()}
    assert source.closed
    source = _Batches(20)
    assert [x async for x in Flux.from_publisher(source).filter(_even)] == list(range(0, 20, 2))
    assert source.readers == {asyncio.current_task()}
    assert source.closed


async def test_a_batched_source_fails_without_demand_and_after_the_items_in_hand() -> None:
    source = _Batches(10, fail_open=True)
    ts = TestSubscriber[int](initial_request=0)
    Flux.from_publisher(source).subscribe(ts)
    await ts.wait_terminated()
    ts.assert_error(ConnectionError)
    assert source.closed
    source = _Batches(10, fail_after=8, kind=UserList)  # any sequence will do
    ts = TestSubscriber[int](initial_request=MAX_DEMAND)
    Flux.from_publisher(source).subscribe(ts)
    await ts.wait_terminated()
    ts.assert_values(*range(8)).assert_error(ValueError)
    assert source.closed


async def test_a_batched_source_whose_stages_drop_everything_gives_the_loop_turns() -> None:
    source = _Batches(5000, most=100, instant=True)
    read_by_then: list[int] = []
    ts = TestSubscriber[int](initial_request=MAX_DEMAND)
    Flux.from_publisher(source).filter(lambda x: x < 0).subscribe(ts)  # its task is scheduled
    asyncio.get_running_loop().call_soon(lambda: read_by_then.append(source.read))
    await ts.wait_terminated()
    ts.assert_values().assert_complete()
    assert read_by_then[0] < 5000  # the task gave the loop a turn after a batch it dropped


# -- async fusion --------------------------------------------------------------------------


@attrs.define(eq=False)
class _Recording(Subscription):
    requests: list[int] = attrs.field(factory=list)
    cancels: int = 0
    fail_with: Exception | None = None

    def request(self, n: int) -> None:
        self.requests.append(n)
        if self.fail_with is not None:
            raise self.fail_with

    def cancel(self) -> None:
        self.cancels += 1


@attrs.define(eq=False)
class _Source:
    """Subscribes whoever comes with a `_Recording` subscription."""

    subscription: _Recording = attrs.field(factory=_Recording)
    subscribers: list[Subscriber[int]] = attrs.field(factory=list)

    def subscribe(self, subscriber: Subscriber[int]) -> None:
        self.subscribers.append(subscriber)
        subscriber.on_subscribe(self.subscription)


@attrs.define(eq=False)
class _Boundary(AsyncBoundarySubscriber[int]):
    """An async boundary subscriber that accepts or refuses, and records what it took."""

    accept: bool
    taken: tuple[int, int] | None = None
    errors: list[BaseException] = attrs.field(factory=list)

    def take_boundary(self, prefetch: int, replenish: int) -> bool:
        if self.accept:
            self.taken = (prefetch, replenish)
        return self.accept

    def on_subscribe(self, subscription: Subscription) -> None:
        pass

    def on_next(self, item: int) -> None:
        pass

    def on_error(self, error: BaseException) -> None:
        self.errors.append(error)

    def on_complete(self) -> None:
        pass


def test_a_boundary_subscriber_that_accepts_is_subscribed_to_the_source() -> None:
    source = _Source()
    subscriber = _Boundary(accept=True)
    assert fuse_boundary(subscriber, source, 16, 12)
    assert subscriber.taken == (16, 12)
    assert source.subscribers == [subscriber]


def test_the_boundary_stays_for_a_subscriber_that_refuses_or_is_no_boundary() -> None:
    source = _Source()
    assert not fuse_boundary(_Boundary(accept=False), source, 16, 12)
    assert not fuse_boundary(TestSubscriber[int](), source, 16, 12)
    assert source.subscribers == []


async def test_deferred_requests_go_out_from_a_loop_callback_in_order() -> None:
    upstream = _Recording()
    deferred = DeferredSubscription(upstream, asyncio.get_running_loop(), _Boundary(accept=True))
    deferred.request(3)
    deferred.request(5)
    assert upstream.requests == []
    await asyncio.sleep(0)
    assert upstream.requests == [3, 5]


async def test_a_cancel_acts_at_once_and_drops_the_requests_still_waiting() -> None:
    upstream = _Recording()
    deferred = DeferredSubscription(upstream, asyncio.get_running_loop(), _Boundary(accept=True))
    deferred.request(3)
    deferred.cancel()
    deferred.cancel()
    assert upstream.cancels == 1
    await asyncio.sleep(0)
    assert upstream.requests == []


async def test_a_raising_request_cancels_upstream_and_fails_the_subscriber() -> None:
    upstream = _Recording(fail_with=OSError("request broke rule 3.15"))
    subscriber = _Boundary(accept=True)
    deferred = DeferredSubscription(upstream, asyncio.get_running_loop(), subscriber)
    deferred.request(1)
    await asyncio.sleep(0)
    assert upstream.cancels == 1
    assert [str(e) for e in subscriber.errors] == ["request broke rule 3.15"]


async def test_async_for_over_a_publisher_whose_request_raises_gets_the_error() -> None:
    class Broken:
        def subscribe(self, subscriber: Subscriber[int]) -> None:
            subscriber.on_subscribe(_Recording(fail_with=OSError("request failed")))

    with pytest.raises(OSError, match="request failed"):
        async for _ in Flux.from_publisher(Broken()).publish_on(buffer_size=4):
            pass


@attrs.define(eq=False)
class _Filled(AsyncBoundarySubscriber[int]):
    """Takes the boundary and records every signal; the test makes the requests."""

    subscription: Subscription | None = None
    signals: list[object] = attrs.field(factory=list)
    also_request: int = 0
    """Requested again from inside every ``on_items``."""
    threads: list[int] = attrs.field(factory=list)
    """The thread of every ``on_items``."""
    ended: asyncio.Event = attrs.field(factory=asyncio.Event)
    """Set by the terminal signal."""

    def take_boundary(self, prefetch: int, replenish: int) -> bool:
        return True

    def on_subscribe(self, subscription: Subscription) -> None:
        self.subscription = subscription

    def on_next(self, item: int) -> None:
        self.signals.append(item)

    def on_items(self, items: list[int]) -> None:
        self.signals.append(items)
        self.threads.append(threading.get_ident())
        if self.also_request:
            assert self.subscription is not None
            self.subscription.request(self.also_request)

    def on_error(self, error: BaseException) -> None:
        self.signals.append(error)
        self.ended.set()

    def on_complete(self) -> None:
        self.signals.append("complete")
        self.ended.set()

    def request(self, n: int) -> None:
        assert self.subscription is not None
        self.subscription.request(n)


def _filled(source: Publisher[Any], *, also_request: int = 0) -> _Filled:
    subscriber = _Filled(also_request=also_request)
    assert fuse_boundary(subscriber, source, 16, 12)
    assert type(subscriber.subscription).__name__ == "PulledSubscription"
    return subscriber


async def test_a_source_at_hand_fills_a_boundary_subscriber_a_request_at_a_time() -> None:
    subscriber = _filled(Flux.range(0, 5).map(lambda x: x * 10))
    assert subscriber.signals == []  # nothing before a request
    subscriber.request(2)
    assert subscriber.signals == [[0, 10]]  # one call for the request, not one per item
    subscriber.request(2)
    subscriber.request(2)
    assert subscriber.signals == [[0, 10], [20, 30], [40], "complete"]
    subscriber.request(2)  # after the end: nothing
    assert subscriber.signals[-1] == "complete"


async def test_a_failing_source_at_hand_ends_with_its_error_after_the_items_before_it() -> None:
    def fail_at_3(x: int) -> int:
        if x == 3:
            raise ValueError("bad 3")
        return x

    subscriber = _filled(Flux.range(0, 10).map(fail_at_3))
    subscriber.request(8)
    assert subscriber.signals[0] == [0, 1, 2]
    assert isinstance(subscriber.signals[1], ValueError)
    assert len(subscriber.signals) == 2
    nulls = _filled(Flux.from_iterable([1, None, 3]))
    nulls.request(3)
    assert nulls.signals[0] == [1]
    assert isinstance(nulls.signals[1], NullSignalError)  # rule 2.13, by position
    assert "#1" in str(nulls.signals[1])


async def _ended(subscriber: _Filled) -> None:
    """Wait for *subscriber*'s terminal signal: a pull past the first `DRAIN_BATCH` items runs
    from a loop callback."""
    async with asyncio.timeout(5):
        await subscriber.ended.wait()


async def test_a_list_at_hand_is_pulled_a_slice_at_a_time_and_ends_with_its_last_item() -> None:
    class NoEquals:
        """An item that compares to nothing (as a numpy array's ``==`` would fail)."""

        def __eq__(self, other: object) -> bool:
            raise AssertionError("the None check asked an item's ==")

        __hash__ = object.__hash__

    items: list[Any] = [NoEquals(), *range(2 * DRAIN_BATCH)]
    subscriber = _Filled()
    Flux.from_iterable(items).subscribe(subscriber)
    subscriber.request(3)
    assert subscriber.signals == [items[:3]]
    subscriber.request(len(items) - 3)  # exactly what is left
    await _ended(subscriber)
    pulls = [s for s in subscriber.signals if isinstance(s, list)]
    assert [len(pull) for pull in pulls] == [3, DRAIN_BATCH, DRAIN_BATCH - 2]
    # the list's length is exact: the end comes with the last item, not with a request more
    assert subscriber.signals[-1] == "complete"
    assert [x for pull in pulls for x in pull] == items


async def test_a_list_at_hand_names_a_none_by_its_position_after_the_items_before_it() -> None:
    items: list[Any] = [*range(DRAIN_BATCH + 500), None, 7]
    subscriber = _Filled()
    Flux.from_iterable(items).subscribe(subscriber)
    subscriber.request(MAX_DEMAND)
    await _ended(subscriber)
    assert [len(s) for s in subscriber.signals if isinstance(s, list)] == [DRAIN_BATCH, 500]
    error = subscriber.signals[-1]
    assert isinstance(error, NullSignalError)
    assert f"#{DRAIN_BATCH + 500}" in str(error)  # counted over the pulls before


async def test_a_pulled_subscription_refuses_a_bad_request_and_stops_once_cancelled() -> None:
    subscriber = _filled(Flux.range(0, 5))
    subscriber.request(0)  # rule 3.9
    assert len(subscriber.signals) == 1
    assert isinstance(subscriber.signals[0], ValueError)
    subscriber.request(1)
    assert len(subscriber.signals) == 1
    cancelled = _filled(Flux.range(0, 5))
    assert cancelled.subscription is not None
    cancelled.subscription.cancel()
    cancelled.request(3)
    assert cancelled.signals == []


async def test_a_large_request_is_pulled_a_drain_batch_per_loop_turn() -> None:
    subscriber = _filled(Flux.range(0, 2 * DRAIN_BATCH + 10))
    subscriber.request(MAX_DEMAND)
    assert [len(s) for s in subscriber.signals if isinstance(s, list)] == [DRAIN_BATCH]
    await asyncio.sleep(0)
    assert [len(s) for s in subscriber.signals if isinstance(s, list)] == [DRAIN_BATCH] * 2
    await asyncio.sleep(0)
    assert [len(s) for s in subscriber.signals if isinstance(s, list)] == [DRAIN_BATCH] * 2 + [10]
    assert subscriber.signals[-1] == "complete"


async def test_a_request_from_inside_on_items_only_adds_demand() -> None:
    subscriber = _filled(Flux.range(0, 6), also_request=2)  # rule 3.3: no recursion
    subscriber.request(2)
    assert subscriber.signals == [[0, 1]]
    await asyncio.sleep(0)
    assert subscriber.signals == [[0, 1], [2, 3]]


async def test_flux_subscribe_pulls_a_source_at_hand_into_an_items_subscriber() -> None:
    # Not in a boundary's place: any subscriber that takes lists (a sink) is pulled.
    subscriber = _Filled()
    Flux.range(0, 5).map(lambda x: x * 10).subscribe(subscriber)
    assert type(subscriber.subscription).__name__ == "PulledSubscription"
    assert snapshot(subscriber.subscription).stages[0].operator == "range → map (pulled)"
    subscriber.request(3)
    subscriber.request(3)
    assert subscriber.signals == [[0, 10, 20], [30, 40], "complete"]
    # a chain that may drop items is subscribed: one on_next per item
    dropping = _Filled()
    Flux.range(0, 5).filter(lambda x: x % 2 == 0).subscribe(dropping)
    assert type(dropping.subscription).__name__ != "PulledSubscription"
    dropping.request(5)
    assert dropping.signals == [0, 2, 4, "complete"]


async def test_a_request_from_another_thread_is_pulled_on_the_owning_loop() -> None:
    subscriber = _Filled()
    Flux.range(0, 3).subscribe(subscriber)
    await asyncio.to_thread(subscriber.request, 5)
    await asyncio.sleep(0)
    assert subscriber.signals == [[0, 1, 2], "complete"]
    assert subscriber.threads == [threading.get_ident()]  # handed over to the loop's thread
