"""The pipeline runs on Spark: the same markers and loops as the bridge's suite."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

from tests.spark.conftest import (
    pytest_asyncio_loop_factories as pytest_asyncio_loop_factories,
    pytest_collection_modifyitems as pytest_collection_modifyitems,
)
