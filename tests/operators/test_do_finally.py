"""do_finally: once, on any end."""

from __future__ import annotations

import logging

import pytest

from reactive_aio import Flux
from reactive_aio.testing import TestSubscriber

from ._transform_support import Probe


def test_do_finally_after_complete_once() -> None:
    ends: list[str] = []
    ts = TestSubscriber[int]()
    Flux.range(0, 2).do_finally(ends.append).subscribe(ts)
    ts.request(1)
    assert ends == []
    ts.request(1)
    ts.assert_complete()
    ts.cancel()
    assert ends == ["complete"]


def test_do_finally_on_error_and_on_cancel() -> None:
    ends: list[str] = []
    ts = TestSubscriber[int](initial_request=1)
    Flux.error(OSError("x")).do_finally(ends.append).subscribe(ts)
    ts.assert_error(OSError)
    probe = Probe(5)
    ts2 = TestSubscriber[int](initial_request=1)
    Flux.from_publisher(probe).do_finally(ends.append).subscribe(ts2)
    ts2.cancel()
    ts2.cancel()
    assert ends == ["error", "cancel"]
    assert probe.cancels == 1


async def test_raising_do_finally_is_reported(caplog: pytest.LogCaptureFixture) -> None:
    import asyncio

    loop = asyncio.get_running_loop()
    reported: list[object] = []
    loop.set_exception_handler(lambda _loop, context: reported.append(context["exception"]))
    ts = TestSubscriber[int](initial_request=5)
    with caplog.at_level(logging.ERROR, logger="reactive_aio"):
        Flux.range(0, 1).do_finally(lambda s: 1 // 0).subscribe(ts)
    ts.assert_values(0).assert_complete()
    assert len(reported) == 1
    assert isinstance(reported[0], ZeroDivisionError)
