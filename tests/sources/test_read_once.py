"""from_iterable and from_async_iterable over a one-shot iterator (a generator, or an iterator
whose ``iter()``/``aiter()`` is itself) serve one subscriber; a later one gets ``on_error``
naming the fix. An iterable that makes a fresh iterator each time stays re-readable."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator

import pytest

from reactive_aio import Flux
from reactive_aio.testing import TestSubscriber


async def agen() -> AsyncIterator[int]:
    for i in range(3):
        yield i


def gen() -> Iterator[int]:
    yield from range(3)


class SelfIterating:
    """An async iterator that is its own ``__aiter__``: one pass, like a generator."""

    def __init__(self) -> None:
        self.left = [0, 1, 2]

    def __aiter__(self) -> SelfIterating:
        return self

    async def __anext__(self) -> int:
        if not self.left:
            raise StopAsyncIteration
        return self.left.pop(0)


class Fresh:
    """An async iterable whose ``__aiter__`` starts a new pass every time."""

    def __aiter__(self) -> AsyncIterator[int]:
        return agen()


ASYNC_FIX = "Flux.defer(lambda: Flux.from_async_iterable(gen()))"
SYNC_FIX = "Flux.defer(lambda: Flux.from_iterable(gen()))"


async def second_subscriber(flux: Flux[int], first: list[int]) -> TestSubscriber[int]:
    """The second subscriber of *flux*, terminated, after the first read *first*."""
    assert await flux.to_list() == first
    second = TestSubscriber[int](initial_request=10)
    flux.subscribe(second)  # subscribe does not raise: the error comes as a signal
    await second.wait_terminated()
    return second.assert_no_values()


ONE_SHOT: dict[str, tuple[Callable[[], Flux[int]], str, str]] = {
    "async generator": (lambda: Flux.from_async_iterable(agen()), "__aiter__", ASYNC_FIX),
    "own __aiter__": (lambda: Flux.from_async_iterable(SelfIterating()), "__aiter__", ASYNC_FIX),
    "generator": (lambda: Flux.from_iterable(gen()), "__iter__", SYNC_FIX),
    "list iterator": (lambda: Flux.from_iterable(iter([0, 1, 2])), "__iter__", SYNC_FIX),
    "map": (lambda: Flux.from_iterable(map(int, "012")), "__iter__", SYNC_FIX),
}


@pytest.mark.parametrize("case", ONE_SHOT)
async def test_a_second_subscriber_of_a_one_shot_iterator_gets_an_error(case: str) -> None:
    make, dunder, fix = ONE_SHOT[case]
    second = await second_subscriber(make(), [0, 1, 2])
    second.assert_error(RuntimeError, "can be read once")
    second.assert_error(RuntimeError, f"its {dunder} returns itself")
    second.assert_error(RuntimeError, fix)
    # behind a fused chain (from_iterable runs its stages in its own emit loop) as well
    fused = make().map(lambda x: x * 10).filter(lambda x: x > 0)
    (await second_subscriber(fused, [10, 20])).assert_error(RuntimeError, fix)


async def test_a_one_shot_async_iterator_read_in_part_is_spent() -> None:
    flux = Flux.from_async_iterable(agen())
    assert await flux.take(1).to_list() == [0]
    with pytest.raises(RuntimeError, match="can be read once"):
        await flux.to_list()


async def test_a_one_shot_inner_pulled_by_flat_map_serves_once() -> None:
    # flat_map pulls an inner with items at hand through its iterator, not a subscription
    inner = Flux.from_iterable(gen())
    with pytest.raises(RuntimeError, match="can be read once"):
        await Flux.range(0, 2).concat_map(lambda _: inner).to_list()
    assert await Flux.range(0, 2).concat_map(lambda _: Flux.from_iterable(gen())).to_list() == [
        0,
        1,
        2,
        0,
        1,
        2,
    ]


async def test_fresh_iterables_and_deferred_generators_stay_re_readable() -> None:
    fluxes: list[Flux[int]] = [
        Flux.from_async_iterable(Fresh()),
        Flux.defer(lambda: Flux.from_async_iterable(agen())),
        Flux.from_iterable([0, 1, 2]),
        Flux.from_iterable(range(3)),
        Flux.defer(lambda: Flux.from_iterable(gen())),
        Flux.just(0, 1, 2),
    ]
    for flux in fluxes:
        for _ in range(3):
            assert await flux.to_list() == [0, 1, 2]
