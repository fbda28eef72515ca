"""User code raising CancelledError while the stream is not cancelled fails the stream."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest

from reactive_aio import Flux
from reactive_aio.testing import TestSubscriber


async def _cancelled_elsewhere(x: int) -> int:
    future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    future.cancel()  # cancelled by somebody else, before the user's code awaits it
    return await future


async def _one_then_cancelled() -> AsyncIterator[int]:
    yield 1
    await _cancelled_elsewhere(0)


def _raises_in_thread(x: int) -> int:
    raise asyncio.CancelledError


async def _acquire() -> int:
    return await _cancelled_elsewhere(0)


async def _release(resource: int, error: BaseException | None) -> None:
    pass


STREAMS: dict[str, tuple[Callable[[], Flux[int]], list[int], str]] = {
    "map_async": (lambda: Flux.range(0, 3).map_async(_cancelled_elsewhere), [], "map_async's"),
    "from_async_iterable": (
        lambda: Flux.from_async_iterable(_one_then_cancelled()),
        [1],
        "the async iterable",
    ),
    "map_in_thread": (
        lambda: Flux.range(0, 3).map_in_thread(_raises_in_thread),
        [],
        "map_in_thread's",
    ),
    "flat_map": (lambda: Flux.range(0, 3).flat_map(_cancelled_elsewhere), [], "the awaitable"),
    "using_async": (
        lambda: Flux.using_async(_acquire, lambda r: Flux.just(r), _release),
        [],
        "using_async's acquire",
    ),
}


@pytest.mark.parametrize("case", STREAMS.values(), ids=STREAMS.keys())
async def test_cancelled_error_of_user_code_fails_the_stream(
    case: tuple[Callable[[], Flux[int]], list[int], str],
) -> None:
    make, before, what = case
    ts = TestSubscriber[int](initial_request=10)
    make().subscribe(ts)
    await ts.wait_terminated(timeout=5)  # it used to hang, with nothing logged
    ts.assert_values(*before).assert_error(
        RuntimeError, match="raised CancelledError although the stream was not cancelled"
    )
    assert str(ts.errors[0]).startswith(what)
    assert isinstance(ts.errors[0].__cause__, asyncio.CancelledError) or what == "the awaitable"


async def test_cancelling_the_stream_still_cancels_the_running_call_quietly() -> None:
    started = asyncio.Event()
    finished: list[str] = []

    async def slow(x: int) -> int:
        started.set()
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            finished.append("cancelled")
            raise
        return x

    ts = TestSubscriber[int](initial_request=1)
    Flux.range(0, 1).map_async(slow).subscribe(ts)
    await started.wait()
    ts.cancel()
    for _ in range(5):
        await asyncio.sleep(0)
    assert finished == ["cancelled"]
    assert not ts.terminated
