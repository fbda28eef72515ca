"""switch_on_next: the latest inner stream of a stream of streams."""

from __future__ import annotations

from reactive_aio import Flux, Publisher
from reactive_aio.testing import TestPublisher, TestSubscriber


async def test_rxpy_switch_latest_data() -> None:
    """After RxPY's ``switch_latest`` cases: a new inner stream cancels the previous one."""
    outer = TestPublisher[Publisher[int]].create()
    first = TestPublisher[int].create()
    second = TestPublisher[int].create()
    ts = TestSubscriber[int](initial_request=10)
    Flux.from_publisher(outer).switch_on_next().subscribe(ts)
    outer.next(first)
    first.next(1, 2)
    outer.next(second)
    first.assert_cancelled()
    second.next(3)
    second.complete()
    ts.assert_values(1, 2, 3).assert_not_terminated()
    outer.complete()
    ts.assert_complete()


async def test_switch_on_next_of_synchronous_inners_and_awaitables() -> None:
    async def five() -> int:
        return 5

    streams = Flux.just(Flux.range(0, 2), Flux.range(7, 2))
    assert await streams.switch_on_next().to_list() == [0, 1, 7, 8]
    assert await Flux.just(five()).switch_on_next().to_list() == [5]


async def test_switch_on_next_inner_error_ends_the_stream() -> None:
    ts = TestSubscriber[int](initial_request=10)
    Flux.just(Flux.just(1), Flux.error(OSError("x"))).switch_on_next().subscribe(ts)
    ts.assert_values(1).assert_error(OSError)
