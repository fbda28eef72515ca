"""Async iterables, anyio memory streams, RxPY observables and aiostream streams."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator

import anyio
import pytest

from reactive_aio import Flux, MissingBackpressureError, NullSignalError
from reactive_aio.adapters import aiter as aiter_adapter
from reactive_aio.adapters.anyio import from_receive_stream, open_receive_stream, to_send_stream
from reactive_aio.testing import TestSubscriber

from ._support import Probe, wait_for


class Boom(Exception):
    pass


# -- async iterables -------------------------------------------------------------------


async def test_aiter_adapter_is_the_core_bridge() -> None:
    async def gen() -> AsyncIterator[int]:
        for i in range(3):
            yield i

    assert await aiter_adapter.from_async_iterable(gen()).to_list() == [0, 1, 2]
    assert [x async for x in aiter_adapter.to_async_iterator(Flux.range(0, 3))] == [0, 1, 2]


# -- anyio -----------------------------------------------------------------------------


async def test_from_receive_stream_demand_then_cancel_closes_the_stream() -> None:
    send, receive = anyio.create_memory_object_stream[int](2)
    ts = TestSubscriber[int]()
    from_receive_stream(receive).subscribe(ts)
    send.send_nowait(1)
    send.send_nowait(2)
    with pytest.raises(anyio.WouldBlock):
        send.send_nowait(3)  # nothing requested: the stream's buffer is the bound
    ts.request(1)
    await ts.wait_for_values(1)
    ts.assert_values(1)
    ts.cancel()
    await wait_for(lambda: receive._closed)
    with pytest.raises(anyio.BrokenResourceError):
        await send.send(4)
    send.close()


async def test_from_receive_stream_completes_when_senders_close() -> None:
    send, receive = anyio.create_memory_object_stream[int](5)
    async with send:
        for i in range(3):
            await send.send(i)
    assert await from_receive_stream(receive).to_list() == [0, 1, 2]


async def test_to_send_stream_waits_for_room() -> None:
    probe = Probe()
    send, receive = anyio.create_memory_object_stream[int](4)
    async with anyio.create_task_group() as group:
        group.start_soon(to_send_stream, probe.endless(lambda i: i), send)
        got = []
        async with receive:
            async for item in receive:
                got.append(item)
                assert probe.produced <= len(got) + 4 + 1  # capacity + the one being sent
                if len(got) == 50:
                    break
        await wait_for(lambda: probe.live == 0)
    assert got == list(range(50))


async def test_to_send_stream_closes_then_raises_the_error() -> None:
    send, receive = anyio.create_memory_object_stream[int](10)

    def fail(i: int) -> int:
        if i == 2:
            raise Boom("source failed")
        return i

    with pytest.raises(Boom):
        await to_send_stream(Flux.range(0, 5).map(fail), send)
    async with receive:
        assert [item async for item in receive] == [0, 1]


async def test_open_receive_stream_and_leaving_early_cancels() -> None:
    probe = Probe()
    async with open_receive_stream(probe.endless(lambda i: i), capacity=3) as items:
        got = [await items.receive() for _ in range(5)]
    assert got == [0, 1, 2, 3, 4]
    await wait_for(lambda: probe.live == 0)
    async with open_receive_stream(Flux.range(0, 4)) as items:
        assert [i async for i in items] == [0, 1, 2, 3]


# -- RxPY ------------------------------------------------------------------------------

reactivex = pytest.importorskip("reactivex")

from reactive_aio.adapters.rx import Overflow, from_observable, to_observable  # noqa: E402


async def test_from_observable_waits_for_demand_within_its_buffer() -> None:
    subject = reactivex.subject.Subject()
    ts = TestSubscriber[int]()
    from_observable(subject, overflow=Overflow.BUFFER(3)).subscribe(ts)
    for i in range(3):
        subject.on_next(i)
    ts.assert_no_values()
    ts.request(1)
    ts.assert_values(0)
    ts.request(5)
    subject.on_next(3)
    subject.on_completed()
    ts.assert_values(0, 1, 2, 3).assert_complete()


@pytest.mark.parametrize(
    ("overflow", "kept", "dropped"),
    [
        (Overflow.BUFFER(2, then="drop_latest"), [0, 1, 2, 3], [4, 5, 6, 7, 8, 9]),
        (Overflow.BUFFER(2, then="drop_oldest"), [0, 1, 8, 9], [2, 3, 4, 5, 6, 7]),
        (Overflow.DROP, [0, 1], [2, 3, 4, 5, 6, 7, 8, 9]),
        (Overflow.LATEST, [0, 1, 9], [2, 3, 4, 5, 6, 7, 8]),
    ],
)
def test_from_observable_drop_policies_count_exactly(
    overflow: Overflow, kept: list[int], dropped: list[int]
) -> None:
    subject = reactivex.subject.Subject()
    seen_dropped: list[int] = []
    ts = TestSubscriber[int](2)
    from_observable(subject, overflow=overflow, on_dropped=seen_dropped.append).subscribe(ts)
    for i in range(10):
        subject.on_next(i)
    subject.on_completed()
    ts.request(10)
    ts.assert_values(*kept).assert_complete()
    assert seen_dropped == dropped


def test_from_observable_overflow_error_keeps_the_buffered_items() -> None:
    subject = reactivex.subject.Subject()
    ts = TestSubscriber[int]()
    from_observable(subject, overflow=Overflow.BUFFER(2)).subscribe(ts)
    for i in range(5):
        subject.on_next(i)
    assert not subject.observers  # the observable was disposed
    ts.request(5)
    ts.assert_values(0, 1).assert_error(MissingBackpressureError, "buffer of 2 items is full")


def test_from_observable_raising_on_drop_fails_the_stream() -> None:
    def boom(item: int) -> None:
        raise Boom(f"dropped {item}")

    subject = reactivex.subject.Subject()
    ts = TestSubscriber[int]()
    from_observable(subject, overflow=Overflow.DROP, on_dropped=boom).subscribe(ts)
    subject.on_next(1)
    ts.assert_error(Boom, "dropped 1")
    assert not subject.observers


def test_from_observable_error_none_and_cancel() -> None:
    ts = TestSubscriber[int](5)
    from_observable(reactivex.throw(Boom("rx failed"))).subscribe(ts)
    ts.assert_error(Boom, "rx failed")

    ts = TestSubscriber[int](5)
    from_observable(reactivex.of(1, None, 3)).subscribe(ts)
    ts.assert_values(1).assert_error(NullSignalError, "rule 2.13")

    subject = reactivex.subject.Subject()
    ts = TestSubscriber[int](1)
    from_observable(subject).subscribe(ts)
    subject.on_next(1)
    ts.cancel()
    assert not subject.observers
    subject.on_next(2)
    ts.assert_values(1).assert_not_terminated()


async def test_from_observable_hands_foreign_thread_items_over_in_order() -> None:
    subject = reactivex.subject.Subject()
    ts = TestSubscriber[int](1000)
    from_observable(subject).subscribe(ts)

    def produce() -> None:
        for i in range(500):
            subject.on_next(i)
        subject.on_completed()

    thread = threading.Thread(target=produce)
    thread.start()
    await ts.wait_terminated()
    thread.join()
    ts.assert_values(*range(500)).assert_complete()
    assert ts.threads == {threading.get_ident()}


async def test_to_observable_round_trip_and_dispose() -> None:
    got: list[int] = []
    done = asyncio.Event()
    to_observable(Flux.range(0, 600), prefetch=16).subscribe(
        on_next=got.append, on_completed=done.set
    )
    await done.wait()
    assert got == list(range(600))

    errors: list[BaseException] = []
    to_observable(Flux.error(Boom("x"))).subscribe(on_error=errors.append)
    assert isinstance(errors[0], Boom)

    probe = Probe()
    disposable = to_observable(probe.endless(lambda i: i), prefetch=4).subscribe(
        on_next=lambda i: None
    )
    disposable.dispose()
    assert probe.live == 0
    assert probe.produced <= 4 + 1024  # one drain batch at most before the dispose


# -- aiostream -------------------------------------------------------------------------

aiostream = pytest.importorskip("aiostream")

from reactive_aio.adapters.aiostream import from_stream, to_stream  # noqa: E402


async def test_aiostream_both_ways() -> None:
    xs = aiostream.stream.range(5) | aiostream.pipe.map(lambda x: x * 10)
    assert await from_stream(xs).to_list() == [0, 10, 20, 30, 40]
    assert await from_stream(xs).take(2).to_list() == [0, 10]
    ys = to_stream(Flux.range(0, 4)) | aiostream.pipe.map(lambda x: x + 1)
    assert await (ys | aiostream.pipe.list()) == [1, 2, 3, 4]
    assert await (ys | aiostream.pipe.list()) == [1, 2, 3, 4]  # each iteration subscribes afresh


async def test_to_stream_stops_the_publisher_early_and_passes_errors() -> None:
    probe = Probe()
    first = to_stream(probe.endless(lambda i: i), prefetch=8) | aiostream.pipe.take(3)
    assert await (first | aiostream.pipe.list()) == [0, 1, 2]
    await wait_for(lambda: probe.live == 0)
    with pytest.raises(Boom):
        await (to_stream(Flux.error(Boom("x"))) | aiostream.pipe.list())
