"""Consuming a flux: callbacks, awaitable terminals, async iteration."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from reactive_aio import Flux, NoSuchElementError, NullSignalError, Subscriber, to_async_iterator

from ..manual_publisher import ManualPublisher


async def test_to_list_first_last_reduce() -> None:
    flux = Flux.range(1, 5)
    assert await flux.to_list() == [1, 2, 3, 4, 5]
    assert await flux.first() == 1
    assert await flux.last() == 5
    assert await flux.reduce(lambda acc, x: acc + x, 100) == 115


async def test_first_and_last_of_empty() -> None:
    with pytest.raises(NoSuchElementError):
        await Flux.empty().first()
    with pytest.raises(NoSuchElementError):
        await Flux.empty().last()
    assert await Flux.empty().first(default=7) == 7
    assert await Flux.empty().last("none") == "none"


async def test_first_cancels_the_rest() -> None:
    pulled: list[int] = []

    async def gen() -> AsyncIterator[int]:
        for i in range(100):
            pulled.append(i)
            yield i

    assert await Flux.from_async_iterable(gen()).first() == 0
    await asyncio.sleep(0)
    assert pulled == [0]


async def test_reduce_with_raising_function_cancels_and_raises() -> None:
    def bad(acc: int, x: int) -> int:
        if x == 3:
            raise ZeroDivisionError("reducer failed on 3")
        return acc + x

    with pytest.raises(ZeroDivisionError, match="on 3"):
        await Flux.range(0, 10).reduce(bad, 0)


async def test_error_is_raised_from_await() -> None:
    with pytest.raises(KeyError):
        await Flux.error(KeyError("k")).to_list()


async def test_subscribe_with_callbacks_returns_a_disposable() -> None:
    items: list[int] = []
    done = asyncio.Event()
    disposable = Flux.range(0, 3).subscribe(on_next=items.append, on_complete=done.set)
    await done.wait()
    assert items == [0, 1, 2]
    assert disposable.disposed


async def test_dispose_cancels() -> None:
    items: list[int] = []
    disposable = Flux.never().subscribe(on_next=items.append)
    assert not disposable.disposed
    disposable.dispose()
    disposable.dispose()
    assert disposable.disposed


async def test_raising_on_next_callback_goes_to_on_error_and_cancels() -> None:
    errors: list[BaseException] = []
    seen: list[int] = []

    def on_next(x: int) -> None:
        seen.append(x)
        if x == 1:
            raise ValueError("callback failed on 1")

    Flux.range(0, 10).subscribe(on_next=on_next, on_error=errors.append)
    assert seen == [0, 1]
    assert len(errors) == 1
    assert isinstance(errors[0], ValueError)


async def test_subscribe_with_prefetch_replenishes_in_batches() -> None:
    manual = ManualPublisher()
    Flux.from_publisher(manual).subscribe(on_next=lambda _: None, prefetch=8)
    assert manual.requests == [8]
    assert manual.subscriber is not None
    for i in range(6):
        manual.subscriber.on_next(i)
    assert manual.requests == [8, 6]  # three quarters consumed: top the window up


async def test_async_for_is_never_more_than_prefetch_ahead() -> None:
    produced = 0

    def count(x: int) -> int:
        nonlocal produced
        produced += 1
        return x

    consumed = 0
    prefetch = 32
    async for _ in Flux.range(0, 10_000).map(count).iterate(prefetch=prefetch):
        consumed += 1
        assert produced - consumed <= prefetch
        if consumed % 100 == 0:
            await asyncio.sleep(0)  # a slow consumer
    assert consumed == 10_000


async def test_async_for_over_third_party_publisher() -> None:
    class ThirdParty:
        def subscribe(self, subscriber: Subscriber[int]) -> None:
            Flux.range(0, 5).subscribe(subscriber)

    assert [x async for x in to_async_iterator(ThirdParty(), prefetch=2)] == [0, 1, 2, 3, 4]


async def test_async_for_raises_the_error_after_items() -> None:
    items: list[int] = []

    def fail_on_3(x: int) -> int:
        if x == 3:
            raise RuntimeError("map failed on 3")
        return x

    async def consume() -> None:
        async for x in Flux.range(0, 10).map(fail_on_3):
            items.append(x)  # noqa: PERF401 - the items before the error are the point

    with pytest.raises(RuntimeError, match="on 3"):
        await consume()
    assert items == [0, 1, 2]


async def test_leaving_async_for_early_cancels() -> None:
    closed = asyncio.Event()

    async def gen() -> AsyncIterator[int]:
        try:
            i = 0
            while True:
                yield i
                i += 1
        finally:
            closed.set()

    async for x in Flux.from_async_iterable(gen()):
        if x == 5:
            break
    gc.collect()
    async with asyncio.timeout(2):
        await closed.wait()


class _EmitsNone:
    """A broken publisher of another library: 1, None, 2 within demand, on the caller's stack."""

    def __init__(self) -> None:
        self.raised: list[BaseException] = []
        self.cancelled = False

    def subscribe(self, subscriber: Subscriber[int]) -> None:
        publisher = self

        class _Subscription:
            def request(self, n: int) -> None:
                for item in (1, None, 2):
                    try:
                        subscriber.on_next(item)  # type: ignore[arg-type]
                    except TypeError as exc:  # rule 2.13: the subscriber refused it
                        publisher.raised.append(exc)
                        return
                subscriber.on_complete()

            def cancel(self) -> None:
                publisher.cancelled = True

        subscriber.on_subscribe(_Subscription())


@pytest.mark.parametrize("collector", ["to_list", "first", "last", "reduce"])
async def test_a_collector_refuses_a_none_item_and_fails(collector: str) -> None:
    publisher = _EmitsNone()
    flux = Flux.from_publisher(publisher)
    collect: dict[str, Callable[[], Awaitable[object]]] = {
        "to_list": flux.to_list,
        "first": lambda: flux.skip(1).first(),
        "last": flux.last,
        "reduce": lambda: flux.reduce(lambda acc, x: acc + x, 0),
    }
    with pytest.raises(NullSignalError, match=r"rule 2\.13"):
        await collect[collector]()
    assert len(publisher.raised) == 1, "on_next(None) must raise to the publisher (rule 2.13)"


async def test_subscribe_with_a_function_points_to_on_next() -> None:
    with pytest.raises(TypeError, match=r"subscribe\(on_next=print\)"):
        Flux.just(1).subscribe(print)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="takes a Subscriber"):
        Flux.just(1).subscribe(42)  # type: ignore[call-overload]


def _miss(x: int) -> int:
    """What ``next()`` on a search that finds nothing does: raise StopIteration."""
    rows: list[int] = []
    return next(y for y in rows if y == x)


async def _async_miss(x: int) -> int:
    raise StopAsyncIteration  # a coroutine passes it on as it is (PEP 479 turns StopIteration)


_STOPPING: dict[str, Callable[[], Flux[int]]] = {
    "map": lambda: Flux.range(0, 3).map(_miss),
    "filter": lambda: Flux.range(0, 3).filter(_miss),
    "map behind a boundary": lambda: Flux.range(0, 3).publish_on().map(_miss),
    "map in a flat_map inner": lambda: Flux.just(0).flat_map(lambda _: Flux.range(0, 2).map(_miss)),
    "map_async": lambda: Flux.range(0, 3).map_async(_async_miss),
}
"""User code that raises StopIteration or StopAsyncIteration, fused or not."""


async def _consume(flux: Flux[int], how: str) -> object:
    if how == "async for":
        return [x async for x in flux]
    if how == "reduce":
        return await flux.reduce(lambda acc, x: acc + x, 0)
    if how == "reduce's function":
        return await flux.reduce(lambda acc, x: _miss(x), 0)
    method: Callable[[], Awaitable[object]] = getattr(flux, how)
    return await method()


@pytest.mark.parametrize("how", ["to_list", "first", "last", "reduce", "async for"])
@pytest.mark.parametrize("stage", list(_STOPPING))
async def test_stop_iteration_from_user_code_fails_the_stream_as_a_runtime_error(
    stage: str, how: str
) -> None:
    with pytest.raises(RuntimeError, match=r"^user code raised Stop") as caught:
        await asyncio.wait_for(_consume(_STOPPING[stage](), how), 1)  # a hang would time out
    assert type(caught.value.__cause__) in (StopIteration, StopAsyncIteration)


async def test_stop_iteration_from_a_reducer_fails_the_await_as_a_runtime_error() -> None:
    with pytest.raises(RuntimeError, match=r"^user code raised StopIteration") as caught:
        await asyncio.wait_for(_consume(Flux.range(0, 3), "reduce's function"), 1)
    assert type(caught.value.__cause__) is StopIteration
