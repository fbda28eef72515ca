"""What a benchmark module declares, and how one variant is measured.

A ``bench_*.py`` module exposes ``WORKLOADS``: a sequence of `Workload`. Each workload names a
metric, a default size and its variants; each `Variant` is ``async def run(n: int) -> object`` whose
return value is checked against ``Workload.expected(n)``, so a fast wrong answer never makes it
into a table. The runner (``python -m benchmarks``) imports every ``bench_*.py`` beside this file,
so a new benchmark needs no registration.

Two kinds of measurement:

- ``time``: in-process, one fresh event loop per (workload, loop) shared by its variants. Each
  variant gets a calibration run (also its warm-up); then the timed runs go round-robin across the
  variants and the median is kept. A variant that would take longer than ``rep_cap_s`` per run at
  the full size runs on a smaller ``n`` (per-item cost is flat in ``n`` for these pipelines), and
  its outcome records the ``n`` it used.
- ``rss``: one child process per point (``python -m benchmarks._child``), so points never share a
  heap. The child runs a tiny warm-up (which performs the lazy imports), resets the kernel's
  high-water mark, runs once, and reports the peak resident set above its baseline.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import importlib
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

__all__ = (
    "LOOPS",
    "Metric",
    "Outcome",
    "RssPoint",
    "Variant",
    "Workload",
    "loop_factory",
    "measure_rss",
    "measure_time",
    "unavailable",
)

LOOPS: tuple[str, ...] = ("asyncio", "uvloop")
"""Event loops the runner knows, in report order."""

Metric = Literal["ns/item", "items/s", "MiB"]
Role = Literal["subject", "peer", "floor"]
Status = Literal["ok", "skipped", "error"]

ROOT = Path(__file__).resolve().parent.parent
"""The repository root: children run from here so ``benchmarks`` and ``reactive_aio`` import."""


@dataclass(frozen=True, slots=True)
class Variant:
    """One implementation of a workload.

    ``name`` is the row label (library and form, e.g. ``"asyncio.Queue"``). ``needs`` lists dotted
    names that must import or resolve (``"aiostream"``, ``"reactive_aio.Flux.publish_on"``);
    when one is missing the variant is reported as skipped instead of failing. ``role`` is
    ``"subject"`` for reactive_aio, ``"peer"`` for the libraries compared against it and
    ``"floor"`` for the hand-written baselines (plain and async generators).
    """

    name: str
    run: Callable[[int], Coroutine[Any, Any, object]]
    role: Role = "peer"
    needs: tuple[str, ...] = ()
    note: str = ""


@dataclass(frozen=True, slots=True)
class Workload:
    """A named measurement with its variants.

    ``n`` is the full-run size and ``quick_n`` the ``--quick`` size. For ``kind="rss"`` the sizes
    are ``sizes`` / ``quick_sizes`` and each point runs in a child process. ``items_per_n``
    converts ``n`` into the number of items the metric counts (flat_map emits 10 per input).
    The first ``subject`` variant is the reference every ratio is taken against.
    """

    key: str
    name: str
    title: str
    metric: Metric
    expected: Callable[[int], object]
    variants: tuple[Variant, ...]
    n: int = 1_000_000
    quick_n: int = 10_000
    kind: Literal["time", "rss"] = "time"
    sizes: tuple[int, ...] = ()
    quick_sizes: tuple[int, ...] = ()
    items_per_n: int = 1
    description: str = ""

    @property
    def reference(self) -> str | None:
        """Name of the variant that ratios are computed against."""
        for variant in self.variants:
            if variant.role == "subject":
                return variant.name
        return None

    def variant(self, name: str) -> Variant:
        """Look a variant up by its row label."""
        for variant in self.variants:
            if variant.name == name:
                return variant
        raise KeyError(f"{self.key} has no variant {name!r}")


@dataclass(slots=True)
class RssPoint:
    """Peak resident set of one child run."""

    n: int
    base_mib: float
    peak_mib: float

    @property
    def delta_mib(self) -> float:
        """Growth of the resident set above the post-import baseline (never below zero)."""
        return max(0.0, self.peak_mib - self.base_mib)


@dataclass(slots=True)
class Outcome:
    """The result of one variant on one loop: measured, skipped or failed."""

    workload: str
    variant: str
    role: Role
    loop: str
    status: Status
    reason: str = ""
    n: int = 0
    samples_s: list[float] = field(default_factory=list)
    value: float | None = None
    points: list[RssPoint] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dict; `from_json` reads it back."""
        data = dataclasses.asdict(self)
        data["points"] = [
            {"n": p.n, "base_mib": p.base_mib, "peak_mib": p.peak_mib, "delta_mib": p.delta_mib}
            for p in self.points
        ]
        return data

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Outcome:
        """Rebuild an outcome written by `to_json`."""
        raw_points = data.get("points", [])
        raw_samples = data.get("samples_s", [])
        value = data.get("value")
        assert isinstance(raw_points, list)
        assert isinstance(raw_samples, list)
        return cls(
            workload=str(data["workload"]),
            variant=str(data["variant"]),
            role=_role(data["role"]),
            loop=str(data["loop"]),
            status=_status(data["status"]),
            reason=str(data.get("reason", "")),
            n=int(str(data.get("n", 0))),
            samples_s=[float(s) for s in raw_samples],
            value=None if value is None else float(str(value)),
            points=[
                RssPoint(int(p["n"]), float(p["base_mib"]), float(p["peak_mib"]))
                for p in raw_points
            ],
        )


def _role(value: object) -> Role:
    if value == "subject":
        return "subject"
    if value == "floor":
        return "floor"
    return "peer"


def _status(value: object) -> Status:
    if value == "ok":
        return "ok"
    if value == "skipped":
        return "skipped"
    return "error"


def loop_factory(name: str) -> Callable[[], asyncio.AbstractEventLoop]:
    """The event-loop factory for ``"asyncio"`` or ``"uvloop"``."""
    if name == "asyncio":
        return asyncio.new_event_loop
    if name == "uvloop":
        import uvloop

        return uvloop.new_event_loop
    raise ValueError(f"unknown loop {name!r}; expected one of {LOOPS}")


def unavailable(needs: Sequence[str]) -> str | None:
    """Return why a variant cannot run here, or ``None`` when everything it needs resolves.

    Each entry is a dotted path: the longest importable module prefix is imported and the rest is
    looked up as attributes, so ``"reactive_aio.Flux.publish_on"`` checks the method exists.
    """
    for need in needs:
        parts = need.split(".")
        obj: object = None
        for cut in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:cut]))
            except ImportError:
                continue
            break
        else:
            return f"not installed: {parts[0]}"
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return f"not available: {need}"
            obj = getattr(obj, attr)
    return None


def _nice(n: int) -> int:
    """Round *n* to two significant digits (37_412 -> 37_000), for readable sizes."""
    return n if n < 100 else round(n, 2 - len(str(n)))


async def _timed(
    run: Callable[[int], Coroutine[Any, Any, object]], n: int, expected: object
) -> float:
    gc.collect()
    start = time.perf_counter()
    result = await run(n)
    elapsed = time.perf_counter() - start
    if result != expected:
        raise AssertionError(f"wrong result for n={n}: got {result!r}, expected {expected!r}")
    return elapsed


def measure_time(
    workload: Workload,
    variants: Sequence[Variant],
    loop: str,
    *,
    n: int,
    reps: int,
    rep_cap_s: float,
    min_n: int,
) -> list[Outcome]:
    """Time *variants* of *workload* on one fresh *loop*, one outcome per variant.

    Each variant gets one calibration run at *min_n* (which also warms it up and picks its ``n``:
    the full *n* unless a run would exceed *rep_cap_s*); then the
    timed runs go round-robin, one of each variant per round, so a burst of load from elsewhere on
    the machine lands on every variant alike instead of on whichever ran during it.
    """
    outcomes = [Outcome(workload.key, v.name, v.role, loop, "ok") for v in variants]
    sizes: dict[str, int] = {}
    with asyncio.Runner(loop_factory=loop_factory(loop)) as runner:
        for variant, outcome in zip(variants, outcomes, strict=True):
            reason = unavailable(variant.needs)
            if reason is not None:
                outcome.status, outcome.reason = "skipped", reason
                continue
            n_cal = min(n, min_n)
            try:
                elapsed = runner.run(_timed(variant.run, n_cal, workload.expected(n_cal)))
            except Exception as exc:  # a broken variant is reported, never fatal to the run
                outcome.status, outcome.reason = "error", f"{type(exc).__name__}: {exc}"
                continue
            per_n = elapsed / n_cal
            fits = per_n * n <= rep_cap_s
            sizes[variant.name] = n if fits else max(min_n, _nice(int(rep_cap_s / per_n)))
        for _ in range(reps):
            for variant, outcome in zip(variants, outcomes, strict=True):
                if outcome.status != "ok":
                    continue
                n_rep = sizes[variant.name]
                try:
                    elapsed = runner.run(_timed(variant.run, n_rep, workload.expected(n_rep)))
                except Exception as exc:
                    outcome.status, outcome.reason = "error", f"{type(exc).__name__}: {exc}"
                    continue
                outcome.samples_s.append(elapsed)
    for variant, outcome in zip(variants, outcomes, strict=True):
        if outcome.status != "ok":
            outcome.samples_s = []
            continue
        outcome.n = sizes[variant.name]
        median = statistics.median(outcome.samples_s)
        items = outcome.n * workload.items_per_n
        outcome.value = median / items * 1e9 if workload.metric == "ns/item" else items / median
    return outcomes


def measure_rss(
    module: str,
    workload: Workload,
    variant: Variant,
    loop: str,
    *,
    sizes: Sequence[int],
    time_cap_s: float,
) -> Outcome:
    """Run *variant* once per size, each in its own child process, and record peak RSS growth.

    Sizes run in ascending order. When the last run predicts (linearly) that the next one would
    take longer than *time_cap_s*, the larger sizes are left out and the reason says so; the
    points already measured are kept.
    """
    outcome = Outcome(workload.key, variant.name, variant.role, loop, "ok")
    reason = unavailable(variant.needs)
    if reason is not None:
        outcome.status, outcome.reason = "skipped", reason
        return outcome
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(ROOT), env.get("PYTHONPATH"))))
    for n in sorted(sizes):
        if outcome.points:
            last = outcome.points[-1].n
            estimate = outcome.samples_s[-1] * n / last
            if estimate > time_cap_s:
                outcome.reason = f"stopped after n={last:,}: n={n:,} would take ~{estimate:.0f} s"
                break
        cmd = [sys.executable, "-m", "benchmarks._child", module, workload.key, variant.name]
        cmd += [loop, str(n)]
        proc = subprocess.run(
            cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False
        )
        lines = proc.stdout.strip().splitlines()
        if proc.returncode != 0 or not lines:
            tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            outcome.status, outcome.reason = "error", f"n={n:,}: {tail}"
            outcome.points, outcome.samples_s = [], []
            return outcome
        report = json.loads(lines[-1])
        outcome.points.append(RssPoint(n, report["base_mib"], report["peak_mib"]))
        outcome.samples_s.append(report["seconds"])
    outcome.n = outcome.points[-1].n
    outcome.value = outcome.points[-1].delta_mib
    return outcome
