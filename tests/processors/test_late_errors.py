"""An error a processor receives after it terminated reaches the loop and the logger (rule 1.7)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import pytest

from reactive_aio import (
    BehaviorProcessor,
    MulticastProcessor,
    Processor,
    ReplayProcessor,
    UnicastProcessor,
)
from reactive_aio.testing import TestSubscriber

from ._support import Upstream

PROCESSORS: dict[str, Callable[[], Processor[int, int]]] = {
    "multicast": MulticastProcessor[int],
    "replay": ReplayProcessor[int],
    "behavior": BehaviorProcessor[int],
    "unicast": UnicastProcessor[int],
}


@pytest.mark.parametrize("first", ["complete", "error"])
@pytest.mark.parametrize("make", PROCESSORS.values(), ids=PROCESSORS.keys())
async def test_an_error_after_termination_is_reported(
    make: Callable[[], Processor[int, int]], first: str, caplog: pytest.LogCaptureFixture
) -> None:
    reported: list[Any] = []
    asyncio.get_running_loop().set_exception_handler(lambda _, context: reported.append(context))
    processor = make()
    ts = TestSubscriber[int](initial_request=1)
    processor.subscribe(ts)
    Upstream().attach(processor)
    if first == "complete":
        processor.on_complete()
    else:
        processor.on_error(OSError("first"))
    late = ValueError("late")
    with caplog.at_level(logging.ERROR, logger="reactive_aio"):
        processor.on_error(late)
    assert [c["exception"] for c in reported] == [late]
    assert "rule 1.7" in reported[0]["message"]
    assert [r.exc_info[1] for r in caplog.records if r.exc_info] == [late]
    assert len(ts.errors) + ts.completions == 1  # the subscriber saw the first signal only
