"""The application's tests (`reactive_aio_app`): the data set, and the connectors' broker and
database clients for the tests that drive the application through them."""

from __future__ import annotations

from typing import Any

import pytest

from tests.connectors.conftest import js as js, nc as nc, pg as pg


@pytest.fixture(scope="session")
def raw_flights() -> Any:
    """The real data set as raw records, ordered by scheduled departure."""
    from reactive_aio_app.pipeline._flights import load_raw

    table, rejected = load_raw()
    assert rejected.num_rows == 0
    return table
