"""The TCK's subscriber verifications over `to_spark`'s sink, which users subscribe to any
publisher themselves.

The verifications never complete a stream that carried items and ``max_latency=0`` disables
the timer, so no Spark job runs: only the session is needed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from reactive_aio import Subscriber
from reactive_aio.spark import SparkSink, to_spark
from reactive_aio.tck import (
    ReportingSubscriber,
    SubscriberBlackboxVerification,
    SubscriberWhiteboxVerification,
    TestEnvironment,
    WhiteboxSubscriberProbe,
)


def _env() -> TestEnvironment:
    return TestEnvironment(timeout=5.0, no_signals_timeout=0.05, poll_timeout=0.01)


class _Session:
    spark: Any = None
    target: Path | None = None
    sinks: ClassVar[list[SparkSink]] = []

    @pytest.fixture(autouse=True)
    def _session(self, spark: Any, tmp_path: Path) -> Iterator[None]:
        type(self).spark = spark
        type(self).target = tmp_path / "sink"
        yield
        # Nobody awaits these sinks: stop those the test left running (each holds its
        # target's writer lock), and take the outcome a test's error left in them.
        for sink in self.sinks:
            if sink._loop is not None:  # subscribed
                sink.cancel()
            outcome = sink._future
            if outcome is not None and outcome.done() and not outcome.cancelled():
                outcome.exception()
        self.sinks.clear()

    def _sink(self) -> Subscriber[dict[str, int]]:
        sink = to_spark(str(self.target), spark=self.spark, max_latency=0)
        self.sinks.append(sink)
        return sink


class TestSparkSinkBlackbox(_Session, SubscriberBlackboxVerification[dict[str, int]]):
    def create_env(self) -> TestEnvironment:
        return _env()

    def create_subscriber(self) -> Subscriber[dict[str, int]]:
        return self._sink()

    def create_element(self, element: int) -> dict[str, int]:
        return {"x": element}


class TestSparkSinkWhitebox(_Session, SubscriberWhiteboxVerification[dict[str, int]]):
    def create_env(self) -> TestEnvironment:
        return _env()

    def create_subscriber(
        self, probe: WhiteboxSubscriberProbe[dict[str, int]]
    ) -> Subscriber[dict[str, int]]:
        return ReportingSubscriber(probe, self._sink())

    def create_element(self, element: int) -> dict[str, int]:
        return {"x": element}
