"""flat_map_iterable: iterables emitted within demand."""

from __future__ import annotations

from collections.abc import Iterator

from reactive_aio import Flux, NullSignalError
from reactive_aio.testing import TestSubscriber

from ._transform_support import Probe


def test_flat_map_iterable_pulls_elements_on_demand() -> None:
    pulled: list[int] = []

    def expand(x: int) -> Iterator[int]:
        for i in range(3):
            pulled.append(x * 10 + i)
            yield x * 10 + i

    ts = TestSubscriber[int]()
    Flux.range(0, 2).flat_map_iterable(expand).subscribe(ts)
    ts.assert_no_values()
    ts.request(2)
    ts.assert_values(0, 1).assert_not_terminated()
    assert pulled == [0, 1]
    ts.request(4)
    ts.assert_values(0, 1, 2, 10, 11, 12).assert_complete()
    ts.assert_max_depth(1)


def test_flat_map_iterable_many_empty_iterables_and_long_streams() -> None:
    ts = TestSubscriber[int](initial_request=1000)
    Flux.range(0, 1000).flat_map_iterable(lambda x: [x] if x % 100 == 0 else []).subscribe(ts)
    ts.assert_values(0, 100, 200, 300, 400, 500, 600, 700, 800, 900).assert_complete()


def test_flat_map_iterable_cancel() -> None:
    probe = Probe(100)
    ts = TestSubscriber[int](initial_request=1)
    Flux.from_publisher(probe).flat_map_iterable(lambda x: [x, x]).subscribe(ts)
    ts.cancel()
    assert probe.cancels == 1
    ts.assert_values(0).assert_not_terminated()


def test_flat_map_iterable_raising_fn_iterator_and_none() -> None:
    probe = Probe(10)
    ts = TestSubscriber[int](initial_request=10)
    Flux.from_publisher(probe).flat_map_iterable(lambda x: [1 // (x - 1)]).subscribe(ts)
    ts.assert_values(-1).assert_error(ZeroDivisionError)
    assert probe.cancels == 1

    def broken(x: int) -> Iterator[int]:
        yield x
        raise KeyError("iterator")

    ts2 = TestSubscriber[int](initial_request=10)
    Flux.range(5, 3).flat_map_iterable(broken).subscribe(ts2)
    ts2.assert_values(5).assert_error(KeyError)
    ts3 = TestSubscriber[int](initial_request=10)
    Flux.range(0, 3).flat_map_iterable(lambda x: [None]).subscribe(ts3)  # type: ignore[arg-type]
    ts3.assert_error(NullSignalError)
    ts4 = TestSubscriber[int | None](initial_request=10)
    Flux.range(0, 3).flat_map_iterable(lambda x: [x, x, None] if x else [x]).subscribe(ts4)
    ts4.assert_values(0, 1, 1).assert_error(NullSignalError, match="item #2 of the iterable")


def test_flat_map_iterable_looks_ahead_only_at_the_very_end() -> None:
    pulled: list[int] = []

    def expand(x: int) -> Iterator[int]:
        for i in range(2):
            pulled.append(x * 10 + i)
            yield x * 10 + i

    ts = TestSubscriber[int]()
    Flux.range(0, 2).flat_map_iterable(expand).subscribe(ts)
    ts.request(2)
    assert pulled == [0, 1]  # the first iterable's end is not sought: more is queued anyway
    ts.request(2)
    ts.assert_values(0, 1, 10, 11).assert_complete()  # the last one's end is, to complete
    assert pulled == [0, 1, 10, 11]


def test_flat_map_iterable_upstream_error() -> None:
    ts = TestSubscriber[int](initial_request=10)
    Flux.from_publisher(Probe(2, OSError("x"))).flat_map_iterable(lambda x: [x]).subscribe(ts)
    ts.assert_error(OSError)
