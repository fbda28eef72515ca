"""using, using_async, using_context: a resource per subscriber, released exactly once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from reactive_aio import Flux
from reactive_aio.testing import TestSubscriber

from ..operators._transform_support import Probe, eventually


def test_using_acquires_per_subscriber_and_releases_after_complete() -> None:
    log: list[str] = []

    def acquire() -> int:
        log.append("acquire")
        return 3

    flux = Flux.using(
        acquire,
        lambda n: Flux.range(0, n),
        lambda n: log.append(f"release {n}"),
    )
    ts = TestSubscriber[int]()
    flux.subscribe(ts)
    assert log == ["acquire"]
    ts.request(1)
    ts.assert_values(0).assert_not_terminated()
    ts.request(5)
    ts.assert_values(0, 1, 2).assert_complete()
    assert log == ["acquire", "release 3"]
    flux.subscribe(TestSubscriber[int](initial_request=1))
    assert log.count("acquire") == 2


def test_using_releases_on_cancel_and_on_error() -> None:
    released: list[int] = []
    probe = Probe(10)
    ts = TestSubscriber[int](initial_request=1)
    Flux.using(lambda: 1, lambda _: Flux.from_publisher(probe), released.append).subscribe(ts)
    ts.cancel()
    ts.cancel()
    assert released == [1]
    assert probe.cancels == 1
    failed = TestSubscriber[int](initial_request=5)
    Flux.using(
        lambda: 2, lambda _: Flux.from_publisher(Probe(1, OSError("x"))), released.append
    ).subscribe(failed)
    failed.assert_values(0).assert_error(OSError)
    assert released == [1, 2]


def test_using_raising_acquire_use_and_release() -> None:
    released: list[int] = []
    ts = TestSubscriber[int](initial_request=1)
    Flux.using(lambda: 1 // 0, lambda _: Flux.range(0, 1), released.append).subscribe(ts)
    ts.assert_error(ZeroDivisionError)
    assert released == []
    ts2 = TestSubscriber[int](initial_request=1)
    missing: dict[str, Flux[int]] = {}
    Flux.using(lambda: 5, lambda _: missing["key"], released.append).subscribe(ts2)
    ts2.assert_error(KeyError)
    assert released == [5]
    ts3 = TestSubscriber[int](initial_request=5)
    Flux.using(lambda: 5, lambda _: Flux.range(0, 2), lambda _: 1 // 0).subscribe(ts3)
    ts3.assert_values(0, 1).assert_complete()  # the failing release is reported, not signalled


async def test_using_async_carries_demand_over_the_acquisition() -> None:
    log: list[str] = []
    gate = asyncio.Event()

    async def acquire() -> int:
        await gate.wait()
        log.append("acquired")
        return 4

    async def release(n: int, error: BaseException | None) -> None:
        log.append(f"released {n} {error!r}")

    ts = TestSubscriber[int]()
    Flux.using_async(acquire, lambda n: Flux.range(0, n), release).subscribe(ts)
    ts.request(2)
    gate.set()
    await ts.wait_for_values(2)
    ts.assert_values(0, 1).assert_not_terminated()
    ts.request(5)
    await ts.wait_terminated()
    ts.assert_complete()
    await eventually(lambda: len(log) == 2)
    assert log == ["acquired", "released 4 None"]


async def test_using_async_cancel_during_acquisition_releases_nothing() -> None:
    started = asyncio.Event()
    cancelled = asyncio.Event()
    released: list[int] = []

    async def acquire() -> int:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return 1

    async def release(n: int, error: BaseException | None) -> None:
        released.append(n)

    ts = TestSubscriber[int](initial_request=1)
    Flux.using_async(acquire, lambda n: Flux.range(0, n), release).subscribe(ts)
    await started.wait()
    ts.cancel()
    await cancelled.wait()
    assert released == []
    ts.assert_not_terminated()


async def test_using_async_failing_acquire() -> None:
    async def acquire() -> int:
        raise OSError("no connection")

    async def release(n: int, error: BaseException | None) -> None:
        raise AssertionError("nothing to release")

    ts = TestSubscriber[int](initial_request=1)
    Flux.using_async(acquire, lambda n: Flux.range(0, n), release).subscribe(ts)
    await ts.wait_terminated()
    ts.assert_error(OSError, match="no connection")


async def test_using_context_exits_with_the_streams_error() -> None:
    exits: list[BaseException | None] = []

    @asynccontextmanager
    async def connection() -> AsyncIterator[int]:
        try:
            yield 2
        except BaseException as exc:
            exits.append(exc)
            raise
        else:
            exits.append(None)

    ok = TestSubscriber[int](initial_request=5)
    Flux.using_context(connection, lambda n: Flux.range(0, n)).subscribe(ok)
    await ok.wait_terminated()
    ok.assert_values(0, 1).assert_complete()
    failed = TestSubscriber[int](initial_request=5)
    Flux.using_context(
        connection, lambda n: Flux.from_publisher(Probe(n, KeyError("k")))
    ).subscribe(failed)
    await failed.wait_terminated()
    failed.assert_values(0, 1).assert_error(KeyError)
    await eventually(lambda: len(exits) == 2)
    assert exits[0] is None
    assert isinstance(exits[1], KeyError)


def test_using_async_without_loop_fails() -> None:
    async def acquire() -> int:
        return 1

    async def release(n: int, error: BaseException | None) -> None:
        pass

    ts = TestSubscriber[int](initial_request=1)
    Flux.using_async(acquire, lambda n: Flux.range(0, n), release).subscribe(ts)
    ts.assert_error(RuntimeError, match="running event loop")


@pytest.mark.parametrize("n", [0, 3])
async def test_using_to_list(n: int) -> None:
    assert await Flux.using(
        lambda: n, lambda k: Flux.range(0, k), lambda k: None
    ).to_list() == list(range(n))
