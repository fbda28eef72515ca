"""The TCK plugin is loaded by its pytest11 entry point (``reactive_aio_tck``).

The TCK's self-tests and the library verification run on the default asyncio loop only: they
are long, and the loop matrix is covered by the unit tests of each component.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

ASYNCIO_ONLY = {"test_broken.py", "test_library.py", "test_library_subscribers.py"}


def pytest_asyncio_loop_factories(
    config: pytest.Config, item: pytest.Item
) -> dict[str, Callable[[], asyncio.AbstractEventLoop]] | None:
    if Path(str(item.path)).name in ASYNCIO_ONLY:
        return {"asyncio": asyncio.new_event_loop}
    return None
