"""map_skip_errors: bad elements skipped and reported."""

from __future__ import annotations

import logging

import pytest

from reactive_aio import Flux, NullSignalError
from reactive_aio.testing import TestSubscriber

from ._transform_support import Probe


def test_map_skip_errors_skips_and_reports_with_replacement_demand() -> None:
    dropped: list[tuple[int, Exception]] = []
    ts = TestSubscriber[int]()
    Flux.range(0, 5).map_skip_errors(
        lambda x: 10 // (x - 1), on_dropped=lambda item, e: dropped.append((item, e))
    ).subscribe(ts)
    ts.request(2)
    ts.assert_values(-10, 10).assert_not_terminated()
    assert [item for item, _ in dropped] == [1]
    assert isinstance(dropped[0][1], ZeroDivisionError)
    ts.request(5)
    ts.assert_values(-10, 10, 5, 3).assert_complete()


def test_map_skip_errors_none_result_and_default_logging(caplog: pytest.LogCaptureFixture) -> None:
    ts = TestSubscriber[int](initial_request=5)
    with caplog.at_level(logging.WARNING, logger="reactive_aio"):
        Flux.range(0, 3).map_skip_errors(lambda x: x if x != 1 else None).subscribe(ts)  # type: ignore[arg-type]
    ts.assert_values(0, 2).assert_complete()
    assert any("dropped 1" in r.getMessage() for r in caplog.records)
    assert isinstance(caplog.records[0].exc_info[1], NullSignalError)  # type: ignore[index]


def test_map_skip_errors_raising_on_dropped_stops() -> None:
    probe = Probe(10)
    ts = TestSubscriber[int](initial_request=10)

    def refuse(item: int, error: Exception) -> None:
        raise RuntimeError(f"cannot skip {item}")

    Flux.from_publisher(probe).map_skip_errors(lambda x: 1 // (x - 2), on_dropped=refuse).subscribe(
        ts
    )
    ts.assert_values(-1, -1).assert_error(RuntimeError, match="cannot skip 2")
    assert probe.cancels == 1


def test_map_skip_errors_cancel_and_upstream_error() -> None:
    probe = Probe(10)
    ts = TestSubscriber[int](initial_request=1)
    Flux.from_publisher(probe).map_skip_errors(lambda x: x).subscribe(ts)
    ts.cancel()
    assert probe.cancels == 1
    failed = TestSubscriber[int](initial_request=5)
    Flux.from_publisher(Probe(1, OSError("x"))).map_skip_errors(lambda x: x).subscribe(failed)
    failed.assert_values(0).assert_error(OSError)
