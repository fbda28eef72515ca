"""log: every signal to the reactive_aio logger."""

from __future__ import annotations

import logging

import pytest

from reactive_aio import Flux
from reactive_aio.testing import TestSubscriber


def test_log_records_each_signal(caplog: pytest.LogCaptureFixture) -> None:
    ts = TestSubscriber[int]()
    with caplog.at_level(logging.INFO, logger="reactive_aio"):
        Flux.range(0, 1).log("src").subscribe(ts)
        ts.request(1)
        ts.cancel()
    messages = [r.getMessage() for r in caplog.records]
    assert messages[0].startswith("src | on_subscribe(")
    assert messages[1:] == [
        "src | request(1)",
        "src | on_next(0)",
        "src | on_complete()",
        "src | cancel()",
    ]
    ts.assert_values(0).assert_complete()


def test_log_passes_errors(caplog: pytest.LogCaptureFixture) -> None:
    ts = TestSubscriber[int](initial_request=1)
    with caplog.at_level(logging.DEBUG, logger="reactive_aio"):
        Flux.error(OSError("x")).log("e", level=logging.DEBUG).subscribe(ts)
    ts.assert_error(OSError)
    assert any("e | on_error(OSError('x'))" in r.getMessage() for r in caplog.records)
