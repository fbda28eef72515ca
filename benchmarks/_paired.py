"""The JSON lines of the paired comparisons (bench_brokers, bench_postgres): one per side, one
for the paired ratios."""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Sequence
from typing import Any


def side_line(
    bench: str,
    variant: str,
    count: int,
    rounds: int,
    times: Sequence[tuple[float, float]],
    unit: tuple[str, str],
) -> dict[str, Any]:
    """A side's rate (per second, from the median wall) and CPU µs per item, of (wall, CPU)
    *times* over *count* items each; *unit* names an item short and in full (``("msg",
    "messages")``)."""
    short, full = unit
    return {
        "bench": bench,
        "variant": variant,
        full: count,
        "rounds": rounds,
        f"{short}s_per_s": round(count / statistics.median(w for w, _ in times)),
        f"cpu_us_per_{short}": round(statistics.median(c for _, c in times) / count * 1e6, 2),
    }


def ratio_line(bench: str, ratios: Sequence[tuple[float, float]]) -> dict[str, Any]:
    """Median, min and max of the paired (wall, CPU) ratios floor/reactive_aio."""
    walls = [w for w, _ in ratios]
    cpus = [c for _, c in ratios]
    return {
        "bench": bench,
        "variant": "speed ratio floor/reactive_aio (wall; > 1: reactive_aio faster)",
        "median": round(statistics.median(walls), 3),
        "min": round(min(walls), 3),
        "max": round(max(walls), 3),
        "cpu_median": round(statistics.median(cpus), 3),
        "cpu_min": round(min(cpus), 3),
        "cpu_max": round(max(cpus), 3),
    }


def record_round(
    samples: dict[str, list[tuple[float, float]]],
    ratios: list[tuple[float, float]],
    floor: str,
    ours: str,
    measured: dict[str, tuple[float, float]],
) -> None:
    """Add one round's (wall, CPU) of the sides *floor* and *ours* to *samples*, and their
    paired ratios floor/ours to *ratios*."""
    for name in (floor, ours):
        samples.setdefault(name, []).append(measured[name])
    ratios.append((measured[floor][0] / measured[ours][0], measured[floor][1] / measured[ours][1]))


def print_lines(lines: Sequence[dict[str, Any]]) -> None:
    """Print the machine (cores, load now), then *lines*, one JSON object a line."""
    load = os.getloadavg()[0]
    print(json.dumps({"bench": "machine", "cores": os.cpu_count(), "load_1min": round(load, 2)}))
    for line in lines:
        print(json.dumps(line), flush=True)
