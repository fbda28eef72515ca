"""of_type: keep instances of a class."""

from __future__ import annotations

from reactive_aio import Flux
from reactive_aio.testing import TestSubscriber


def test_of_type_filters_and_replaces_dropped_items() -> None:
    ts = TestSubscriber[int]()
    items: list[object] = [1, "a", 2.0, 3, "b"]
    Flux.from_iterable(items).of_type(int).subscribe(ts)
    ts.request(1)
    ts.assert_values(1).assert_not_terminated()
    ts.request(1)
    ts.assert_values(1, 3).assert_not_terminated()
    ts.request(1)
    ts.assert_complete()


def test_of_type_cancel_and_upstream_error() -> None:
    ts = TestSubscriber[int](initial_request=1)
    Flux.range(0, 10).of_type(int).subscribe(ts)
    ts.cancel()
    ts.assert_values(0).assert_not_terminated()
    failed = TestSubscriber[int](initial_request=1)
    Flux.error(OSError("x")).of_type(int).subscribe(failed)
    failed.assert_error(OSError)
