"""metrics: what the chain did, as an OpenTelemetry SDK reads it."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader, NumberDataPoint

from reactive_aio import Flux
from reactive_aio.testing import TestPublisher, TestSubscriber

Points = dict[str, list[tuple[dict[str, Any], float]]]
"""Per instrument: each data point's attributes and its value (a histogram's: its count)."""


@pytest.fixture
def reader() -> InMemoryMetricReader:
    return InMemoryMetricReader()


@pytest.fixture
def provider(reader: InMemoryMetricReader) -> Iterator[MeterProvider]:
    meter_provider = MeterProvider(metric_readers=[reader])
    yield meter_provider
    meter_provider.shutdown()


def _points(reader: InMemoryMetricReader) -> Points:
    points: Points = {}
    data = reader.get_metrics_data()
    assert data is not None
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    value = point.value if isinstance(point, NumberDataPoint) else point.count
                    points.setdefault(metric.name, []).append((dict(point.attributes or {}), value))
    return points


LABELS = {"reactive_aio.name": "ingest", "env": "test"}


def test_counts_equal_what_the_chain_did(
    reader: InMemoryMetricReader, provider: MeterProvider
) -> None:
    ts = TestSubscriber[int]()
    flux = Flux.range(0, 10).name("ingest").tag("env", "test").metrics(meter_provider=provider)
    flux.subscribe(ts)
    ts.request(3).request(4).request(5)
    ts.assert_value_count(10).assert_complete()
    points = _points(reader)
    assert points["reactive_aio.subscribed"] == [(LABELS, 1)]
    assert points["reactive_aio.requested"] == [(LABELS, 12)]
    assert points["reactive_aio.items"] == [(LABELS, 10)]
    assert points["reactive_aio.on_next.delay"] == [(LABELS, 10)]
    assert points["reactive_aio.flow.duration"] == [({**LABELS, "status": "completed"}, 1)]


def test_a_cancelled_flow_and_a_failed_flow(
    reader: InMemoryMetricReader, provider: MeterProvider
) -> None:
    flux = Flux.range(0, 10).name("ingest").tag("env", "test").metrics(meter_provider=provider)
    taken = TestSubscriber[int](initial_request=100)
    flux.take(3).subscribe(taken)
    taken.assert_values(0, 1, 2).assert_complete()
    failing = TestSubscriber[int](initial_request=5)
    flux.map(lambda x: 1 // (x - 2)).subscribe(failing)
    failing.assert_error(ZeroDivisionError)
    source = TestPublisher[int].create()
    upstream_error = TestSubscriber[int](initial_request=1)
    Flux.from_publisher(source).name("ingest").tag("env", "test").metrics(
        meter_provider=provider
    ).subscribe(upstream_error)
    source.error(OSError("gone"))
    durations = {
        attributes["status"]: (attributes.get("exception"), count)
        for attributes, count in _points(reader)["reactive_aio.flow.duration"]
    }
    # take cancels upstream; a map downstream that raises cancels it too; an error goes past
    assert durations == {"cancelled": (None, 2), "error": ("OSError", 1)}
    points = _points(reader)
    assert points["reactive_aio.subscribed"] == [(LABELS, 3)]
    assert points["reactive_aio.items"] == [(LABELS, 3 + 3)]
    assert points["reactive_aio.requested"] == [(LABELS, 3 + 5 + 1)]  # take asks for 3 only


async def test_leaving_async_for_early_is_a_cancelled_flow(
    reader: InMemoryMetricReader, provider: MeterProvider
) -> None:
    flux = Flux.range(0, 1000).map(str).name("ingest").tag("env", "test")
    async for item in flux.metrics(meter_provider=provider):
        if item == "4":
            break
    points = _points(reader)
    assert points["reactive_aio.flow.duration"] == [({**LABELS, "status": "cancelled"}, 1)]
    items = points["reactive_aio.items"][0][1]
    assert items >= 5  # what the prefetch window took
    assert points["reactive_aio.on_next.delay"] == [(LABELS, items)]


async def test_labels_come_from_upstream_and_default_to_the_library(
    reader: InMemoryMetricReader, provider: MeterProvider
) -> None:
    await Flux.range(0, 3).metrics(meter_provider=provider).to_list()
    chain = Flux.range(0, 5).name("a").tag("k", "far").take(4).tag("k", "near").tag("j", "1")
    await chain.filter(bool).metrics(meter_provider=provider).to_list()
    subscribed = {
        attributes["reactive_aio.name"]: attributes
        for attributes, _ in _points(reader)["reactive_aio.subscribed"]
    }
    assert subscribed == {
        "reactive_aio": {"reactive_aio.name": "reactive_aio"},
        "a": {"reactive_aio.name": "a", "k": "near", "j": "1"},
    }


def _run(probe: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)


def test_the_global_meter_provider_is_the_default() -> None:
    done = _run(
        "import asyncio\n"
        "from opentelemetry import metrics\n"
        "from opentelemetry.sdk.metrics import MeterProvider\n"
        "from opentelemetry.sdk.metrics.export import InMemoryMetricReader, NumberDataPoint\n"
        "from reactive_aio import Flux\n"
        "reader = InMemoryMetricReader()\n"
        "metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))\n"
        "asyncio.run(Flux.range(0, 7).name('g').metrics().to_list())\n"
        "for r in reader.get_metrics_data().resource_metrics:\n"
        "    for s in r.scope_metrics:\n"
        "        for m in s.metrics:\n"
        "            if m.name == 'reactive_aio.items':\n"
        "                print(m.data.data_points[0].value)\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "7"


def test_without_the_extra_metrics_names_it() -> None:
    done = _run(
        "import sys\n"
        "sys.modules['opentelemetry'] = None  # as if it were not installed\n"
        "from reactive_aio import Flux\n"
        "flux = Flux.range(0, 3).name('x')\n"
        "try:\n"
        "    flux.metrics()\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    assert done.returncode == 0, done.stderr
    assert "pip install reactive_aio[otel]" in done.stdout


def test_an_invalid_request_is_not_counted_and_fails_the_flow(
    reader: InMemoryMetricReader, provider: MeterProvider
) -> None:
    ts = TestSubscriber[int]()
    Flux.range(0, 3).metrics(meter_provider=provider).subscribe(ts)
    ts.request(0)
    ts.assert_error(ValueError, match="3.9")
    points = _points(reader)
    assert "reactive_aio.requested" not in points
    [(attributes, count)] = points["reactive_aio.flow.duration"]
    assert (attributes["status"], attributes["exception"], count) == (
        "error",
        "NonPositiveRequestError",
        1,
    )
