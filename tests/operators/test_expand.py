"""expand (breadth-first) and expand_deep (depth-first). ``test_reactor_*`` cases are ported
from reactor-core's ``FluxExpandTest``."""

from __future__ import annotations

from reactive_aio import Flux
from reactive_aio.testing import TestSubscriber


def _count_down(v: int) -> Flux[int]:
    return Flux.empty() if v == 0 else Flux.just(v - 1)


def _tree(v: int) -> Flux[int]:
    """1 → 2, 3, 4; each of those → v * 10 + 1 (then nothing)."""
    if v == 1:
        return Flux.just(2, 3, 4)
    return Flux.just(v * 10 + 1) if v < 10 else Flux.empty()


async def test_reactor_recursive_countdown_depth() -> None:
    assert await Flux.just(10).expand_deep(_count_down).to_list() == list(range(10, -1, -1))


async def test_reactor_recursive_countdown_breadth() -> None:
    assert await Flux.just(10).expand(_count_down).to_list() == list(range(10, -1, -1))


async def test_reactor_error() -> None:
    for expansion in (Flux.error(OSError("boom")).expand, Flux.error(OSError("boom")).expand_deep):
        ts = TestSubscriber[int](initial_request=5)
        expansion(_count_down).subscribe(ts)
        ts.assert_error(OSError)


async def test_reactor_empty() -> None:
    assert await Flux.empty().expand(_count_down).to_list() == []
    assert await Flux.empty().expand_deep(_count_down).to_list() == []


async def test_breadth_first_and_depth_first_orders() -> None:
    assert await Flux.just(1).expand(_tree).to_list() == [1, 2, 3, 4, 21, 31, 41]
    assert await Flux.just(1).expand_deep(_tree).to_list() == [1, 2, 21, 3, 31, 4, 41]


async def test_expand_honours_demand_exactly() -> None:
    for expansion in (Flux.just(1).expand, Flux.just(1).expand_deep):
        ts = TestSubscriber[int](initial_request=2)
        expansion(_tree).subscribe(ts)
        ts.assert_value_count(2).assert_not_terminated()
        ts.request(5)
        ts.assert_value_count(7).assert_complete()


async def test_expand_raising_fn_fails() -> None:
    def bad(v: int) -> Flux[int]:
        raise KeyError(v)

    for expansion in (Flux.just(1).expand, Flux.just(1).expand_deep):
        ts = TestSubscriber[int](initial_request=5)
        expansion(bad).subscribe(ts)
        ts.assert_values(1).assert_error(KeyError)
