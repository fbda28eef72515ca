"""``delays.png``: mean delays over time, and per carrier with the number of flights behind each.

The top panel shows the mean departure and arrival delay per day, or per hour when the input
covers three days or less, on an axis that spans just the data. The bottom panel shows each
carrier's mean departure delay with its flight count in the label; carriers with fewer than
`FEW_FLIGHTS` flights are drawn pale, since a mean over a handful of flights says little.
"""

from __future__ import annotations

__all__ = ("FEW_FLIGHTS", "draw_chart", "hourly_delays", "load_matplotlib", "write_chart")

import datetime as dt
from pathlib import Path
from typing import Any

FEW_FLIGHTS = 100
_HOURLY_UP_TO = dt.timedelta(days=3)


def hourly_delays(carrier_hours: Any) -> dict[str, list[Any]]:
    """Per scheduled hour (UTC), in order: counts and sums of the departure and arrival delays,
    from the per carrier and hour table of the run (a ``pyarrow.Table`` with ``time_hour``,
    ``dep_n``, ``dep_sum``, ``arr_n`` and ``arr_sum``)."""
    names = ("dep_n", "dep_sum", "arr_n", "arr_sum")
    hours = carrier_hours.group_by("time_hour").aggregate([(name, "sum") for name in names])
    hours = hours.sort_by("time_hour")
    result = {"time_hour": hours.column("time_hour").to_pylist()}
    result.update((name, hours.column(f"{name}_sum").to_pylist()) for name in names)
    return result


def _series(hourly: dict[str, list[Any]]) -> tuple[list[dt.datetime], list[Any], list[Any], str]:
    """Mean delays per hour, or per day for inputs longer than three days, and the unit."""
    hours: list[dt.datetime] = hourly["time_hour"]
    if not hours:
        return [], [], [], "day"
    by_day = hours[-1] - hours[0] > _HOURLY_UP_TO
    sums: dict[dt.datetime, list[float]] = {}
    for i, hour in enumerate(hours):
        key = (
            hour.replace(hour=0, minute=0, second=0, microsecond=0)
            if by_day
            else hour.replace(minute=0, second=0, microsecond=0)
        )
        acc = sums.setdefault(key, [0.0, 0.0, 0.0, 0.0])
        acc[0] += hourly["dep_n"][i]
        acc[1] += hourly["dep_sum"][i] or 0.0
        acc[2] += hourly["arr_n"][i]
        acc[3] += hourly["arr_sum"][i] or 0.0
    times = sorted(sums)
    dep = [sums[t][1] / sums[t][0] if sums[t][0] else None for t in times]
    arr = [sums[t][3] / sums[t][2] if sums[t][2] else None for t in times]
    return times, dep, arr, "day" if by_day else "hour"


def load_matplotlib() -> Any:
    """Import what drawing takes (about a second), with the file backend: a run does it in a
    thread while Spark computes the table to draw."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def draw_chart(hourly: dict[str, list[Any]], summary: list[dict[str, Any]]) -> Any:
    """The chart as a matplotlib ``Figure`` (see the module docs); *summary* is the per-carrier
    table of the run (``carrier``, ``airline``, ``flights``, ``dep_delay_mean``)."""
    import matplotlib.dates as mdates

    plt = load_matplotlib()

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(11, 9), constrained_layout=True)
    times, dep, arr, unit = _series(hourly)
    marker = "o" if len(times) <= 60 else None
    top.plot(times, dep, label="departure", linewidth=1, marker=marker, markersize=3)
    top.plot(times, arr, label="arrival", linewidth=1, marker=marker, markersize=3)
    top.axhline(0, color="grey", linewidth=0.5)
    if times:
        step = dt.timedelta(days=1) if unit == "day" else dt.timedelta(hours=1)
        top.set_xlim(times[0] - step / 2, times[-1] + step / 2)
    locator = mdates.AutoDateLocator()  # type: ignore[no-untyped-call]
    top.xaxis.set_major_locator(locator)
    top.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))  # type: ignore[no-untyped-call]
    top.set_title(f"Mean delay per {unit}, flights from New York City")
    top.set_xlabel(f"scheduled departure ({unit}, UTC)")
    top.set_ylabel("mean delay (minutes)")
    top.legend()

    rows = sorted(
        (r for r in summary if r["dep_delay_mean"] is not None), key=lambda r: r["dep_delay_mean"]
    )
    labels = [
        f"{r['carrier']} {r['airline'] or ''} ({r['flights']:,} flight{'s' * (r['flights'] != 1)})"
        for r in rows
    ]
    bars = bottom.barh(labels, [r["dep_delay_mean"] for r in rows])
    for bar, row in zip(bars, rows, strict=True):
        if row["flights"] < FEW_FLIGHTS:
            bar.set_alpha(0.35)
    bottom.bar_label(bars, fmt="%.1f", padding=3, fontsize=8)
    bottom.axvline(0, color="grey", linewidth=0.5)
    bottom.margins(x=0.12)
    bottom.set_title(f"Mean departure delay per carrier (pale: fewer than {FEW_FLIGHTS} flights)")
    bottom.set_xlabel("mean departure delay (minutes)")
    bottom.set_ylabel("carrier (flights)")
    return fig


def write_chart(path: Path, hourly: dict[str, list[Any]], summary: list[dict[str, Any]]) -> Path:
    """Draw the chart (`draw_chart`) into *path* (PNG)."""
    import matplotlib.pyplot as plt

    fig = draw_chart(hourly, summary)
    try:
        fig.savefig(path, dpi=100)
    finally:
        plt.close(fig)
    return path
