"""on_backpressure_buffer / _drop / _latest / _error: bounded memory and exact counts."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from reactive_aio import Flux, MissingBackpressureError
from reactive_aio.testing import TestSubscriber

from ..manual_publisher import ManualPublisher


def test_buffer_waits_for_demand_and_keeps_order() -> None:
    hot = ManualPublisher()
    ts = TestSubscriber[int]()
    Flux.from_publisher(hot).on_backpressure_buffer(10).subscribe(ts)
    hot.push(1, 2, 3)
    ts.assert_no_values()
    ts.request(1)
    ts.assert_values(1)
    ts.request(5)
    ts.assert_values(1, 2, 3)
    hot.push(4)
    ts.assert_values(1, 2, 3, 4)
    assert hot.subscriber is not None
    hot.subscriber.on_complete()
    ts.assert_complete().assert_max_depth()


@pytest.mark.parametrize(
    ("overflow", "expected"),
    [("drop_oldest", [3, 4]), ("drop_latest", [0, 1])],
)
def test_buffer_drop_policies(overflow: str, expected: list[int]) -> None:
    hot = ManualPublisher()
    dropped: list[int] = []
    ts = TestSubscriber[int]()
    Flux.from_publisher(hot).on_backpressure_buffer(
        2,
        overflow=overflow,  # type: ignore[arg-type]
        on_overflow=dropped.append,
    ).subscribe(ts)
    hot.push(0, 1, 2, 3, 4)
    ts.request(10)
    ts.assert_values(*expected)
    assert sorted(dropped + ts.values) == [0, 1, 2, 3, 4]


def test_buffer_error_policy_delivers_buffered_items_first() -> None:
    hot = ManualPublisher()
    ts = TestSubscriber[int]()
    Flux.from_publisher(hot).on_backpressure_buffer(2).subscribe(ts)
    hot.push(0, 1, 2)
    assert hot.cancelled
    ts.assert_no_values()
    ts.request(5)
    ts.assert_values(0, 1).assert_error(MissingBackpressureError, match="buffer of 2")


def test_buffer_raising_callback_cancels_then_errors() -> None:
    hot = ManualPublisher()

    def boom(item: int) -> None:
        raise ValueError(f"cannot drop {item}")

    ts = TestSubscriber[int](initial_request=1)
    Flux.from_publisher(hot).on_backpressure_buffer(
        1, overflow="drop_latest", on_overflow=boom
    ).subscribe(ts)
    hot.push(0, 1, 2)
    assert hot.cancelled
    ts.assert_values(0).assert_not_terminated()
    ts.request(1)
    ts.assert_values(0, 1).assert_error(ValueError, match="cannot drop 2")


def test_buffer_cancel_and_upstream_error() -> None:
    hot = ManualPublisher()
    ts = TestSubscriber[int](initial_request=1)
    Flux.from_publisher(hot).on_backpressure_buffer(4).subscribe(ts)
    assert sum(hot.requests) >= 2**63 - 1
    ts.cancel()
    assert hot.cancelled
    failed = TestSubscriber[int](initial_request=1)
    Flux.error(OSError("down")).on_backpressure_buffer(4).subscribe(failed)
    failed.assert_error(OSError)


def test_drop_delivers_only_with_demand() -> None:
    hot = ManualPublisher()
    dropped: list[int] = []
    ts = TestSubscriber[int]()
    Flux.from_publisher(hot).on_backpressure_drop(dropped.append).subscribe(ts)
    hot.push(0, 1)
    ts.request(1)
    hot.push(2, 3)
    ts.assert_values(2)
    assert dropped == [0, 1, 3]


def test_drop_raising_callback_and_upstream_error() -> None:
    hot = ManualPublisher()

    def boom(item: int) -> None:
        raise ValueError("no")

    ts = TestSubscriber[int]()
    Flux.from_publisher(hot).on_backpressure_drop(boom).subscribe(ts)
    hot.push(0)
    assert hot.cancelled
    ts.assert_error(ValueError)
    failed = TestSubscriber[int]()
    Flux.error(OSError("down")).on_backpressure_drop().subscribe(failed)
    failed.assert_error(OSError)


def test_latest_keeps_the_newest() -> None:
    hot = ManualPublisher()
    ts = TestSubscriber[int]()
    Flux.from_publisher(hot).on_backpressure_latest().subscribe(ts)
    hot.push(0, 1, 2)
    ts.request(1)
    ts.assert_values(2)
    hot.push(3)
    hot.push(4)
    ts.request(1)
    ts.assert_values(2, 4)
    ts.cancel()
    assert hot.cancelled
    failed = TestSubscriber[int]()
    Flux.error(OSError("down")).on_backpressure_latest().subscribe(failed)
    failed.assert_error(OSError)


def test_error_fails_on_first_item_without_demand() -> None:
    hot = ManualPublisher()
    ts = TestSubscriber[int](initial_request=1)
    Flux.from_publisher(hot).on_backpressure_error().subscribe(ts)
    hot.push(0, 1)
    assert hot.cancelled
    ts.assert_values(0).assert_error(MissingBackpressureError, match="1 arrived")


def _buffer_drop_oldest(f: Flux[int], drops: list[int]) -> Flux[int]:
    return f.on_backpressure_buffer(64, overflow="drop_oldest", on_overflow=drops.append)


def _buffer_drop_latest(f: Flux[int], drops: list[int]) -> Flux[int]:
    return f.on_backpressure_buffer(64, overflow="drop_latest", on_overflow=drops.append)


def _drop(f: Flux[int], drops: list[int]) -> Flux[int]:
    return f.on_backpressure_drop(drops.append)


@pytest.mark.parametrize("make", [_buffer_drop_oldest, _buffer_drop_latest, _drop])
def test_million_items_bounded_and_exactly_counted(
    make: Callable[[Flux[int], list[int]], Flux[int]],
) -> None:
    """A source of 1,000,000 items, a subscriber that takes 1 in 100: memory stays bounded."""
    hot = ManualPublisher()
    drops: list[int] = []
    seen_max = 0
    ts = TestSubscriber[int]()
    make(Flux.from_publisher(hot), drops).subscribe(ts)
    subscription = ts.subscription
    assert subscription is not None
    push = hot.subscriber
    assert push is not None
    for i in range(1_000_000):
        push.on_next(i)
        if i % 100 == 0:
            subscription.request(1)
            seen_max = max(seen_max, getattr(subscription, "buffered", 0))
    push.on_complete()
    ts.request(1_000)
    ts.assert_complete()
    assert seen_max <= 64
    assert len(ts.values) + len(drops) == 1_000_000


async def test_drop_fed_from_a_thread_drops_on_that_thread() -> None:
    hot = ManualPublisher()
    dropped: list[int] = []
    ts = TestSubscriber[int](initial_request=10)
    Flux.from_publisher(hot).on_backpressure_drop(dropped.append).subscribe(ts)
    producer = threading.Thread(target=hot.push, args=range(100_000))
    producer.start()
    producer.join()  # the loop is blocked: only what the demand covers was handed to it
    assert len(dropped) == 99_990
    await ts.wait_for_values(10)
    ts.assert_values(*range(10))
