"""Every async test runs on the default asyncio loop and on uvloop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
import uvloop


def pytest_asyncio_loop_factories(
    config: pytest.Config, item: pytest.Item
) -> dict[str, Callable[[], asyncio.AbstractEventLoop]]:
    return {"asyncio": asyncio.new_event_loop, "uvloop": uvloop.new_event_loop}
