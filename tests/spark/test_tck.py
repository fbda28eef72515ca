"""The publisher TCK over `from_dataframe` (the Spark publishers are too slow for the registry)."""

from __future__ import annotations

from typing import Any

import pytest

from reactive_aio import Publisher
from reactive_aio.spark import from_dataframe
from reactive_aio.tck import PublisherVerification, TestEnvironment


class TestFromDataFrame(PublisherVerification[Any]):
    spark: Any = None

    @pytest.fixture(autouse=True)
    def _session(self, spark: Any) -> None:
        type(self).spark = spark

    def create_env(self) -> TestEnvironment:
        # Every subscription runs a Spark job, which takes seconds here, so the wait for a
        # signal is long; the window in which no signal may arrive stays short (a signal that
        # must not come would come from the worker thread within it just as well).
        return TestEnvironment(timeout=60.0, no_signals_timeout=0.3, poll_timeout=0.05, scale=1)

    def max_elements_from_publisher(self) -> int:
        # spark.range is lazy, but a partition is computed whole before it is served: the
        # TCK's 2**31 - 1 element stream is not something a DataFrame can be.
        return 20

    def create_publisher(self, elements: int) -> Publisher[Any]:
        # One row per batch, so every TCK element is one Arrow batch of one row. The signals
        # come from the subscription, whatever the transfer; the TCK subscribes hundreds of
        # times, and the partition transfer starts no Python worker per subscription (the
        # stream transfer's cancel and demand are covered in test_bridge).
        return from_dataframe(
            self.spark.range(0, elements, numPartitions=1), batch_rows=1, path="partition"
        )

    def create_failed_publisher(self) -> Publisher[Any] | None:
        # from_dataframe runs its query only once there is demand, so a failing query fails
        # after the first request, never right after on_subscribe as the TCK's failed publisher
        # must (its tests subscribe without requesting). test_bridge covers the failing job.
        return None
