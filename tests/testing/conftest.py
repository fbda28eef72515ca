"""Offer the virtual-time loop to tests that ask for it by name."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
import uvloop

from reactive_aio.testing import virtual_loop_factories, virtual_time as virtual_time


def pytest_asyncio_loop_factories(
    config: pytest.Config, item: pytest.Item
) -> dict[str, Callable[[], asyncio.AbstractEventLoop]]:
    factories: dict[str, Callable[[], asyncio.AbstractEventLoop]] = {
        "asyncio": asyncio.new_event_loop,
        "uvloop": uvloop.new_event_loop,
    }
    marker = item.get_closest_marker("asyncio")
    if marker is not None and "virtual" in marker.kwargs.get("loop_factories", ()):
        factories.update(virtual_loop_factories())
    return factories
