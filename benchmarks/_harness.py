"""What a benchmark module declares, and how one variant is measured.

A ``bench_*.py`` module exposes ``WORKLOADS``: a sequence of `Workload`. Each workload names a
metric, a default size and its variants; each `Variant` is ``async def run(n: int) -> object`` whose
return value is checked against ``Workload.expected(n)``, so a fast wrong answer never makes it
into a table. The runner (``python -m benchmarks``) imports every ``bench_*.py`` beside this file,
so a new benchmark needs no registration.

Two kinds of measurement:

- ``time``: in-process, one fresh event loop per (workload, loop) shared by its variants. Each
  variant gets a calibration run (also its warm-up) that picks its ``n`` (the full size unless a
  run would take longer than ``rep_cap_s``; per-item cost is flat in ``n`` for these pipelines),
  then its Python calls per item are counted with ``sys.setprofile`` at two small sizes. The
  timed runs go in rounds, one run of every variant per round, the order reversed every other
  round; each run records wall time and CPU time (this process's, plus that of any server the
  workload's `Fixture` started). The report compares variants by the ratios of their per-item
  costs *within* a round (paired ratios), so a burst of load from elsewhere on the machine hits
  both sides of a ratio instead of one.
- ``rss``: one child process per point (``python -m benchmarks._child``), so points never share a
  heap. The child runs a tiny warm-up (which performs the lazy imports), resets the kernel's
  high-water mark, runs once, and reports the peak resident set above its baseline.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import importlib
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Coroutine, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any, Literal

__all__ = (
    "LOOPS",
    "Clock",
    "Fixture",
    "Goal",
    "Metric",
    "Outcome",
    "RssPoint",
    "Variant",
    "Workload",
    "count_calls",
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
Clock = Literal["cpu", "wall"]

ROOT = Path(__file__).resolve().parent.parent
"""The repository root: children run from here so ``benchmarks`` and ``reactive_aio`` import."""


@dataclass(frozen=True, slots=True)
class Variant:
    """One implementation of a workload.

    ``name`` is the row label: the library and the path it takes (``"reactivex from_iterable"``),
    so a table never hides which of a library's ways was measured; ``note`` spells the path out
    and says where it gives up something reactive_aio keeps (demand, a bound). ``needs`` lists
    dotted names that must import or resolve (``"aiostream"``,
    ``"reactive_aio.Flux.publish_on"``); when one is missing the variant is reported as skipped
    instead of failing. ``role`` is ``"subject"`` for reactive_aio, ``"peer"`` for the libraries
    compared against it and ``"floor"`` for the hand-written baselines (plain and async
    generators). ``versus`` limits a subject's ratios to the named rows (an HTTP adapter is
    compared with the plain response on the same server, not with the other server's).
    """

    name: str
    run: Callable[[int], Coroutine[Any, Any, object]]
    role: Role = "peer"
    needs: tuple[str, ...] = ()
    note: str = ""
    versus: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Goal:
    """A target the project set itself: *subject* against *peer*, on every loop.

    ``measure="cost"`` compares per-item costs (subject / peer, the goal is met at or below
    ``target``); ``measure="speed"`` compares throughput (subject / peer, met at or above
    ``target``). ``was`` is the same ratio when the target was set, for the record. ``clock``
    overrides the workload's clock for this goal (a CPU goal and a wall goal on one workload).
    """

    text: str
    subject: str
    peer: str
    measure: Literal["cost", "speed"]
    target: float
    was: float | None = None
    clock: Clock | None = None


class Fixture:
    """What a workload's fixture offers while it is entered: nothing, by default.

    A fixture that starts processes (an HTTP server) reports their CPU time, so a run's CPU
    figure covers the work on both ends, and counts the Python calls made there.
    """

    def cpu_seconds(self) -> float:
        """CPU seconds used so far by the processes this fixture started."""
        return 0.0

    def start_counting_calls(self) -> None:
        """Start counting Python calls in the processes this fixture started."""

    def stop_counting_calls(self) -> int:
        """Stop counting and return the calls counted since `start_counting_calls`."""
        return 0


@contextlib.contextmanager
def _no_fixture(loop: str) -> Iterator[Fixture]:
    yield Fixture()


@dataclass(frozen=True, slots=True)
class Workload:
    """A named measurement with its variants.

    ``n`` is the full-run size and ``quick_n`` the ``--quick`` size. For ``kind="rss"`` the sizes
    are ``sizes`` / ``quick_sizes`` and each point runs in a child process. ``items_per_n``
    converts ``n`` into the number of items the metric counts (flat_map emits 10 per input).
    The first ``subject`` variant is the reference of the charts. ``clock`` is the time the
    ratios compare: ``"cpu"`` for work done in this process (steadier on a shared machine than
    wall time, which also counts the time other processes took the core), ``"wall"`` where the
    workload's point is throughput across processes (HTTP). ``fixed_n`` keeps ``n`` as
    declared (it is part of the workload's definition) instead of shrinking it for slow
    variants. ``fixture(loop)`` is entered around the measurement on each loop (a server).
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
    clock: Clock = "cpu"
    fixed_n: bool = False
    rounds: int | None = None
    goals: tuple[Goal, ...] = ()
    fixture: Callable[[str], AbstractContextManager[Fixture]] = _no_fixture

    @property
    def reference(self) -> str | None:
        """Name of the variant that the charts highlight."""
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
    """The result of one variant on one loop: measured, skipped or failed.

    ``wall_s`` and ``cpu_s`` hold one timed run per round, in round order (a variant that fails
    keeps none), each of ``n`` inputs; ``value`` and ``cpu_value`` are their medians in the
    workload's metric. RSS workloads use ``points`` (and ``wall_s`` for each point's run time).
    """

    workload: str
    variant: str
    role: Role
    loop: str
    status: Status
    reason: str = ""
    n: int = 0
    wall_s: list[float] = field(default_factory=list)
    cpu_s: list[float] = field(default_factory=list)
    value: float | None = None
    cpu_value: float | None = None
    calls_per_item: float | None = None
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
    def from_json(cls, data: dict[str, Any]) -> Outcome:
        """Rebuild an outcome written by `to_json`."""

        def number(key: str) -> float | None:
            value = data.get(key)
            return None if value is None else float(value)

        return cls(
            workload=str(data["workload"]),
            variant=str(data["variant"]),
            role=_role(data["role"]),
            loop=str(data["loop"]),
            status=_status(data["status"]),
            reason=str(data.get("reason", "")),
            n=int(data.get("n", 0)),
            wall_s=[float(s) for s in data.get("wall_s", [])],
            cpu_s=[float(s) for s in data.get("cpu_s", [])],
            value=number("value"),
            cpu_value=number("cpu_value"),
            calls_per_item=number("calls_per_item"),
            points=[
                RssPoint(int(p["n"]), float(p["base_mib"]), float(p["peak_mib"]))
                for p in data.get("points", [])
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


def _check(result: object, expected: object, n: int) -> None:
    if result != expected:
        raise AssertionError(f"wrong result for n={n}: got {result!r}, expected {expected!r}")


async def _timed(
    run: Callable[[int], Coroutine[Any, Any, object]],
    n: int,
    expected: object,
    fixture: Fixture,
) -> tuple[float, float]:
    """One checked run of *run*: (wall seconds, CPU seconds here and in the fixture's processes)."""
    gc.collect()
    cpu = time.process_time() + fixture.cpu_seconds()
    start = time.perf_counter()
    result = await run(n)
    wall = time.perf_counter() - start
    cpu = time.process_time() + fixture.cpu_seconds() - cpu
    _check(result, expected, n)
    return wall, cpu


def count_calls(
    runner: asyncio.Runner,
    run: Callable[[int], Coroutine[Any, Any, object]],
    n: int,
    expected: object,
    fixture: Fixture,
) -> int:
    """Python function calls (frames entered, generator and coroutine resumptions included)
    made while *run* handles *n* inputs, here and in the fixture's processes."""
    calls = 0

    def profile(frame: FrameType, event: str, arg: object) -> None:
        nonlocal calls
        if event == "call":
            calls += 1

    async def counted() -> object:
        sys.setprofile(profile)
        try:
            return await run(n)
        finally:
            sys.setprofile(None)

    fixture.start_counting_calls()
    try:
        result = runner.run(counted())
    finally:
        calls += fixture.stop_counting_calls()
    _check(result, expected, n)
    return calls


def _calls_per_item(
    runner: asyncio.Runner, workload: Workload, variant: Variant, n: int, fixture: Fixture
) -> float:
    """Calls per item from two sizes, so what a run costs once (setup, teardown) drops out."""
    small, large = max(1, n // 2), n
    counts = [
        count_calls(runner, variant.run, size, workload.expected(size), fixture)
        for size in (small, large)
    ]
    return (counts[1] - counts[0]) / ((large - small) * workload.items_per_n)


def measure_time(
    workload: Workload,
    variants: Sequence[Variant],
    loop: str,
    *,
    n: int,
    rounds: int,
    rep_cap_s: float,
    min_n: int,
    calls_n: int | None = None,
) -> list[Outcome]:
    """Time *variants* of *workload* on one fresh *loop*, one outcome per variant.

    Each variant gets one calibration run at *min_n* (its warm-up, which also picks its ``n``:
    the full *n* unless a run would take more than *rep_cap_s* on the workload's clock, or the
    workload fixes it), and, given
    *calls_n*, a count of its Python calls per item. Then *rounds* rounds: one timed run of every
    variant per round, the order reversed every other round, so a drift in the machine's load
    does not favour the variants that run first.
    """
    outcomes = [Outcome(workload.key, v.name, v.role, loop, "ok") for v in variants]
    sizes: dict[str, int] = {}
    with (
        workload.fixture(loop) as fixture,
        asyncio.Runner(loop_factory=loop_factory(loop)) as runner,
    ):

        def timed(variant: Variant, outcome: Outcome, size: int) -> tuple[float, float] | None:
            try:
                coro = _timed(variant.run, size, workload.expected(size), fixture)
                return runner.run(coro)
            except Exception as exc:  # a broken variant is reported, never fatal to the run
                outcome.status, outcome.reason = "error", f"{type(exc).__name__}: {exc}"
                return None

        for variant, outcome in zip(variants, outcomes, strict=True):
            reason = unavailable(variant.needs)
            if reason is not None:
                outcome.status, outcome.reason = "skipped", reason
                continue
            n_cal = min(n, min_n)
            took = timed(variant, outcome, n_cal)
            if took is None:
                continue
            # Sized by the clock the workload compares, so a busy machine does not shrink n.
            per_n = (took[1] if workload.clock == "cpu" else took[0]) / n_cal
            fits = workload.fixed_n or per_n * n <= rep_cap_s
            sizes[variant.name] = n if fits else max(min_n, _nice(int(rep_cap_s / per_n)))
            if calls_n:
                try:
                    outcome.calls_per_item = _calls_per_item(
                        runner, workload, variant, min(calls_n, n), fixture
                    )
                except Exception as exc:
                    outcome.status, outcome.reason = "error", f"{type(exc).__name__}: {exc}"
        ok = [(v, o) for v, o in zip(variants, outcomes, strict=True) if o.status == "ok"]
        for index in range(rounds):
            for variant, outcome in ok if index % 2 == 0 else reversed(ok):
                if outcome.status != "ok":
                    continue
                took = timed(variant, outcome, sizes[variant.name])
                if took is not None:
                    outcome.wall_s.append(took[0])
                    outcome.cpu_s.append(took[1])
    for variant, outcome in zip(variants, outcomes, strict=True):
        if outcome.status != "ok":
            outcome.wall_s, outcome.cpu_s = [], []
            continue
        outcome.n = sizes[variant.name]
        items = outcome.n * workload.items_per_n
        outcome.value = _in_metric(statistics.median(outcome.wall_s) / items, workload.metric)
        outcome.cpu_value = _in_metric(statistics.median(outcome.cpu_s) / items, workload.metric)
    return outcomes


def _in_metric(seconds_per_item: float, metric: Metric) -> float:
    return seconds_per_item * 1e9 if metric == "ns/item" else 1 / seconds_per_item


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
            estimate = outcome.wall_s[-1] * n / last
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
            outcome.points, outcome.wall_s = [], []
            return outcome
        report = json.loads(lines[-1])
        outcome.points.append(RssPoint(n, report["base_mib"], report["peak_mib"]))
        outcome.wall_s.append(report["seconds"])
    outcome.n = outcome.points[-1].n
    outcome.value = outcome.points[-1].delta_mib
    return outcome
