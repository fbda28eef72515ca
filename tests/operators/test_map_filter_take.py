"""map, filter, take: demand, cancellation, raising callbacks, upstream errors."""

from __future__ import annotations

import pytest

from reactive_aio import Flux, NullSignalError
from reactive_aio.testing import TestPublisher, TestSubscriber

from ._transform_support import Probe as TransformProbe


def test_map_waits_for_demand() -> None:
    ts = TestSubscriber[int]()
    Flux.just(1, 2).map(lambda v: v + 1).subscribe(ts)
    ts.assert_no_values()
    ts.request(1)
    ts.assert_values(2).assert_not_terminated()
    ts.request(1)
    ts.assert_values(2, 3).assert_complete()


def test_map_raising_cancels_upstream_then_errors() -> None:
    pulled: list[int] = []

    def source() -> object:
        for i in range(10):
            pulled.append(i)
            yield i

    def fail_on_2(x: int) -> int:
        if x == 2:
            raise ValueError("bad item 2")
        return x

    ts = TestSubscriber[int](initial_request=10)
    Flux.from_iterable(source()).map(fail_on_2).subscribe(ts)  # type: ignore[arg-type]
    ts.assert_values(0, 1).assert_error(ValueError, match="bad item 2")
    assert pulled == [0, 1, 2]


def test_map_returning_none_is_an_error() -> None:
    ts = TestSubscriber[int](initial_request=10)
    Flux.just(1, 2).map(lambda _: None).subscribe(ts)  # type: ignore[arg-type]
    ts.assert_error(NullSignalError, match="returned None for int 1")


def test_map_passes_upstream_error() -> None:
    ts = TestSubscriber[int](initial_request=1)
    Flux.error(OSError("down")).map(lambda x: x).subscribe(ts)
    ts.assert_error(OSError)


def test_filter_replaces_dropped_items_with_requests() -> None:
    ts = TestSubscriber[int](initial_request=2)
    Flux.range(0, 100).filter(lambda x: x % 10 == 0).subscribe(ts)
    ts.assert_values(0, 10).assert_not_terminated()
    ts.request(100)
    assert ts.values[-1] == 90
    ts.assert_complete()


def test_filter_behind_another_source_re_requests_drops_when_the_last_item_is_kept() -> None:
    # Drops are re-requested in batches; a batch still owed when the last item in flight was
    # kept must go out then, or downstream waits forever for items the source never sends.
    tp = TestPublisher[int]()
    ts = TestSubscriber[int](initial_request=0)
    Flux.from_publisher(tp).filter(lambda x: x % 2 != 0).subscribe(ts)
    ts.request(7)
    assert tp.demand == 7
    tp.next(0, 0, 0, 1, 1, 1, 1)
    ts.assert_values(1, 1, 1, 1).assert_not_terminated()
    assert tp.demand == 3  # the three dropped items, asked for again
    tp.next(3, 5, 7)
    ts.assert_values(1, 1, 1, 1, 3, 5, 7)


def test_filter_raising_cancels_and_errors() -> None:
    ts = TestSubscriber[int](initial_request=10)
    Flux.range(0, 10).filter(lambda x: 1 // (x - 3) != 7).subscribe(ts)
    ts.assert_values(0, 1, 2).assert_error(ZeroDivisionError)


def test_take_caps_upstream_demand_and_cancels() -> None:
    ts = TestSubscriber[int](initial_request=100)
    Flux.range(0, 1000).take(3).subscribe(ts)
    ts.assert_values(0, 1, 2).assert_complete()


def test_take_zero_completes_at_once() -> None:
    ts = TestSubscriber[int]()
    Flux.never().take(0).subscribe(ts)
    ts.assert_complete()


def test_take_negative_is_rejected() -> None:
    with pytest.raises(ValueError, match=">= 0"):
        Flux.range(0, 3).take(-1)


def test_take_passes_rule_3_9_upstream() -> None:
    ts = TestSubscriber[int]()
    Flux.range(0, 10).take(5).subscribe(ts)
    ts.request(0)
    ts.assert_error(ValueError, match="rule 3.9")


async def test_pipe_and_or_compose() -> None:
    def double(f: Flux[int]) -> Flux[int]:
        return f.map(lambda x: x * 2)

    assert await Flux.range(0, 3).pipe(double, double).to_list() == [0, 4, 8]
    assert await (Flux.range(0, 3) | double).to_list() == [0, 2, 4]


async def test_take_zero_never_subscribes_upstream() -> None:
    """Deliberate choice (as Reactor): ``take(0)`` completes without subscribing upstream."""
    probe = TransformProbe(10)
    ts = TestSubscriber[int]()
    Flux.from_publisher(probe).take(0).subscribe(ts)
    ts.assert_no_values().assert_complete()
    assert probe.subscribes == 0
