"""switch_on_next: the latest inner stream of a stream of streams."""

from __future__ import annotations

from reactive_aio import Flux, Publisher
from reactive_aio.testing import TestPublisher, TestSubscriber, cold, expect_marbles, run_virtual


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


# RxPY's ``test_switchlatest.py``: one frame is ten of its ticks, subscription at its tick 200.
_FIRST = "-ab--------cd--------ef|"
_SECOND = "-abcd|"
_THIRD = "-abcd----------|"


def _inners(second: str = _SECOND, error: BaseException | None = None) -> dict[str, Flux[int]]:
    return {
        "1": cold(_FIRST, {"a": 101, "b": 102, "c": 103, "d": 104, "e": 105, "f": 106}),
        "2": cold(second, {"a": 201, "b": 202, "c": 203, "d": 204}, error=error),
        "3": cold(_THIRD, {"a": 301, "b": 302, "c": 303, "d": 304}),
    }


_VALUES = {"a": 101, "b": 102, "c": 201, "d": 202, "e": 203, "f": 204}
_VALUES_THIRD = {**_VALUES, "g": 301, "h": 302, "i": 303, "j": 304}


def test_rxpy_switch_data() -> None:
    async def main() -> None:
        outer = cold("----------1---------2---------3---------|", _inners())
        await expect_marbles(
            outer.switch_on_next(),
            "-----------ab--------cdef------ghij----------|",
            _VALUES_THIRD,
        )

    run_virtual(main)


def test_rxpy_switch_inner_throws() -> None:
    async def main() -> None:
        failure = OSError("ex")
        outer = cold("----------1---------2---------3---------|", _inners("-abcd#", failure))
        await expect_marbles(
            outer.switch_on_next(), "-----------ab--------cdef#", _VALUES, error=failure
        )

    run_virtual(main)


def test_rxpy_switch_outer_throws() -> None:
    async def main() -> None:
        failure = OSError("ex")
        outer = cold("----------1---------2---------#", _inners(), error=failure)
        await expect_marbles(
            outer.switch_on_next(), "-----------ab--------cdef-----#", _VALUES, error=failure
        )

    run_virtual(main)


def test_rxpy_switch_no_inner() -> None:
    async def main() -> None:
        outer: Flux[Flux[int]] = cold("------------------------------|", {})
        await expect_marbles(outer.switch_on_next(), "------------------------------|")

    run_virtual(main)


def test_rxpy_switch_inner_completes() -> None:
    async def main() -> None:
        outer = cold("----------1-----------------------|", _inners())
        values = {"a": 101, "b": 102, "c": 103, "d": 104, "e": 105, "f": 106}
        await expect_marbles(outer.switch_on_next(), "-----------ab--------cd--------ef-|", values)

    run_virtual(main)
