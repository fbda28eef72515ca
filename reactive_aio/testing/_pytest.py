"""Pytest fixtures of the test kit; import them into a ``conftest.py`` to use them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ._virtual_time import VirtualTimeLoop

__all__ = ("virtual_time",)


@pytest.fixture
def virtual_time() -> Iterator[VirtualTimeLoop]:
    """A fresh auto-jumping `VirtualTimeLoop` for a synchronous test; closed afterwards.

    Drive it with ``virtual_time.run_until_complete(main())`` or ``virtual_time.advance(s)``.
    """
    loop = VirtualTimeLoop()
    try:
        yield loop
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
