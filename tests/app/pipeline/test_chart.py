"""delays.png, checked through matplotlib's objects and the PNG's header, not its pixels."""

from __future__ import annotations

import datetime as dt
import struct
from pathlib import Path
from typing import Any

import matplotlib.dates as mdates
import matplotlib.pyplot as plt

from reactive_aio_app.pipeline._chart import FEW_FLIGHTS, draw_chart

SUMMARY = [
    {"carrier": "UA", "airline": "United Air Lines Inc.", "flights": 3_445, "dep_delay_mean": 7.3},
    {"carrier": "HA", "airline": "Hawaiian Airlines Inc.", "flights": 23, "dep_delay_mean": 73.4},
    {"carrier": "OO", "airline": "SkyWest Airlines Inc.", "flights": 1, "dep_delay_mean": None},
]


def _hourly(start: dt.datetime, hours: int) -> dict[str, list[Any]]:
    times = [start + dt.timedelta(hours=h) for h in range(hours)]
    return {
        "time_hour": times,
        "dep_n": [10] * hours,
        "dep_sum": [10.0 * (h % 7) for h in range(hours)],
        "arr_n": [10] * hours,
        "arr_sum": [5.0 * (h % 5) for h in range(hours)],
    }


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from the PNG's IHDR chunk."""
    data = path.read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_axes_carry_labels_with_units_and_flight_counts() -> None:
    fig = draw_chart(_hourly(dt.datetime(2013, 1, 1, tzinfo=dt.UTC), 24 * 30), SUMMARY)
    try:
        top, bottom = fig.axes
        assert top.get_xlabel() == "scheduled departure (day, UTC)"
        assert top.get_ylabel() == "mean delay (minutes)"
        assert bottom.get_xlabel() == "mean departure delay (minutes)"
        assert bottom.get_ylabel()
        labels = [t.get_text() for t in bottom.get_yticklabels()]
        assert labels == [
            "UA United Air Lines Inc. (3,445 flights)",
            "HA Hawaiian Airlines Inc. (23 flights)",
        ]
        bars = dict(zip(labels, bottom.patches, strict=True))
        assert bars["HA Hawaiian Airlines Inc. (23 flights)"].get_alpha() < 1  # < FEW_FLIGHTS
        assert bars["UA United Air Lines Inc. (3,445 flights)"].get_alpha() in (None, 1)
        assert str(FEW_FLIGHTS) in bottom.get_title()
        assert [line.get_label() for line in top.get_lines()[:2]] == ["departure", "arrival"]
        assert len(top.get_lines()[0].get_xdata()) == 30  # one point per day
    finally:
        plt.close(fig)


def test_one_day_of_input_is_drawn_per_hour_on_that_day() -> None:
    start = dt.datetime(2013, 6, 1, 5, tzinfo=dt.UTC)
    fig = draw_chart(_hourly(start, 18), SUMMARY)
    try:
        top = fig.axes[0]
        assert top.get_xlabel() == "scheduled departure (hour, UTC)"
        assert len(top.get_lines()[0].get_xdata()) == 18
        low, high = (mdates.num2date(x) for x in top.get_xlim())  # type: ignore[no-untyped-call]
        assert start - dt.timedelta(hours=1) < low < start
        assert start + dt.timedelta(hours=17) < high < start + dt.timedelta(hours=18)
    finally:
        plt.close(fig)
