"""Run every benchmark on asyncio and uvloop and write the reports.

``python -m benchmarks`` (or ``python benchmarks/run.py``) imports each ``bench_*.py`` beside this
file, measures every workload it declares in ``WORKLOADS``, and writes into
``benchmarks/results/``: ``results.json`` (all samples), ``results.md`` (tables with ratios
against each peer) and one PNG per workload. ``--update-readme docs/benchmarks.md`` also replaces
the text between ``<!-- bench:start -->`` and ``<!-- bench:end -->`` in that file with the goal
table.
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import importlib.metadata
import inspect
import os
import pkgutil
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the `benchmarks` package importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import benchmarks
from benchmarks._harness import (
    LOOPS,
    ROOT,
    Outcome,
    Workload,
    measure_rss,
    measure_time,
)
from benchmarks._report import (
    ModuleNote,
    ModuleReport,
    Results,
    WorkloadResult,
    dump,
    render_summary,
    update_readme,
)

__all__ = ("Discovery", "discover", "main")

RESULTS_DIR = Path(__file__).resolve().parent / "results"
PEERS = (
    "aiostream",
    "reactivex",
    "streamz",
    "aioreactive",
    "anyio",
    "uvloop",
    "fastapi",
    "starlette",
    "uvicorn",
    "h11",
    "httptools",
    "aiohttp",
)
DEFAULT_ROUNDS = 7
CALLS_N = 2_000
"""Inputs per calls-per-item count (and half as many): enough that setup cost drops out."""


@dataclass(slots=True)
class Discovery:
    """What the ``bench_*.py`` modules offer."""

    workloads: list[tuple[str, Sequence[Workload]]] = field(default_factory=list)
    """Modules with ``WORKLOADS``: measured by the harness on every loop."""
    reports: list[tuple[str, Callable[..., object]]] = field(default_factory=list)
    """Modules with ``run(quick: bool) -> dict``: they measure themselves; the dict is reported."""
    notes: list[ModuleNote] = field(default_factory=list)
    """Modules with neither, or that failed to import."""


def _self_reporting(module: object) -> Callable[..., object] | None:
    run = getattr(module, "run", None)
    if not callable(run):
        return None
    try:
        params = list(inspect.signature(run).parameters)
    except (TypeError, ValueError):
        return None
    return run if params == ["quick"] else None


def discover() -> Discovery:
    """Import every ``benchmarks/bench_*.py``; modules that fail to import are noted, not fatal.

    A module takes part when it defines ``WORKLOADS`` (a sequence of `Workload`): the harness
    measures it. A module that measures itself takes part through ``run(quick: bool)`` returning
    a flat dict, which is reported as it comes. A module whose optional dependency is missing
    should import it lazily inside its variants (each variant is then reported as skipped) or
    fail at import with ``ImportError`` (the module is then listed as not run).
    """
    found = Discovery()
    for info in sorted(pkgutil.iter_modules(benchmarks.__path__), key=lambda m: m.name):
        if not info.name.startswith("bench_"):
            continue
        name = f"benchmarks.{info.name}"
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            found.notes.append(ModuleNote(name, f"import failed: {exc}"))
            continue
        workloads = getattr(module, "WORKLOADS", None)
        if isinstance(workloads, (list, tuple)) and all(isinstance(w, Workload) for w in workloads):
            found.workloads.append((name, workloads))
        elif (report := _self_reporting(module)) is not None:
            found.reports.append((name, report))
        else:
            found.notes.append(ModuleNote(name, "a standalone script", "standalone"))
    return found


def _git_describe() -> str:
    try:
        proc = subprocess.run(
            ["git", "describe", "--always", "--dirty"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except OSError:
        return "?"
    return proc.stdout.strip() or "?"


def _load() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def _meta(args: argparse.Namespace, loops: Sequence[str]) -> dict[str, object]:
    packages: dict[str, str] = {}
    for name in PEERS:
        try:
            packages[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            packages[name] = "not installed"
    return {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "python": platform.python_version(),
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs",
        "reactive_aio": _git_describe(),
        "packages": packages,
        "loops": list(loops),
        "quick": args.quick,
        "rounds": args.rounds or (3 if args.quick else DEFAULT_ROUNDS),
        "rep_cap_s": args.rep_cap,
        "cpus": os.cpu_count(),
        "load_start": _load(),
    }


def _select(workload: Workload, module: str, only: Sequence[str]) -> bool:
    if not only:
        return True
    short = module.rsplit(".", 1)[-1]
    return any(
        o in (workload.key, workload.name, short, short.removeprefix("bench_")) for o in only
    )


def _rounds(args: argparse.Namespace, workload: Workload) -> int:
    """``--rounds`` when given; else 3 for ``--quick``, the workload's own, or 7."""
    if args.rounds is not None:
        return int(args.rounds)
    return 3 if args.quick else (workload.rounds or DEFAULT_ROUNDS)


def _progress(outcome: Outcome, metric: str) -> None:
    if outcome.status == "ok" and outcome.value is not None and outcome.cpu_s:
        cpu_ns = statistics.median(outcome.cpu_s) / outcome.n * 1e9
        shown = f"{outcome.value:,.1f} {metric} wall, {cpu_ns:,.0f} CPU ns per input"
        shown += f" (n={outcome.n:,}"
        if outcome.calls_per_item is not None:
            shown += f", {outcome.calls_per_item:.1f} calls/item"
        shown += ")"
    elif outcome.status == "ok" and outcome.value is not None:
        shown = f"{outcome.value:,.1f} {metric} (n={outcome.n:,})"
    else:
        shown = f"{outcome.status}: {outcome.reason}"
    print(f"  [{outcome.workload} {outcome.loop}] {outcome.variant}: {shown}", file=sys.stderr)


def run(args: argparse.Namespace) -> Results:
    """Measure everything selected by *args*."""
    loops = LOOPS if args.loop == "both" else (args.loop,)
    found = discover()
    meta = _meta(args, loops)
    results = Results(meta=meta, workloads=[], modules=found.notes)
    rss_jobs = []
    for module, workloads in found.workloads:
        for workload in workloads:
            if not _select(workload, module, args.only) or (args.goals and not workload.goals):
                continue
            result = WorkloadResult.start(module, workload, quick=args.quick)
            results.workloads.append(result)
            if workload.kind == "rss":
                rss_jobs += [
                    (module, workload, result, v, loop) for loop in loops for v in workload.variants
                ]
                continue
            print(f"{workload.key} {workload.title}", file=sys.stderr)
            for loop in loops:
                result.load[loop] = (_load(), None)
                outcomes = measure_time(
                    workload,
                    workload.variants,
                    loop,
                    n=result.n,
                    rounds=_rounds(args, workload),
                    rep_cap_s=args.rep_cap,
                    min_n=min(result.n, workload.quick_n),
                    calls_n=None if args.no_calls else CALLS_N,
                )
                result.load[loop] = (result.load[loop][0], _load())
                for outcome in outcomes:
                    _progress(outcome, workload.metric)
                result.outcomes += outcomes
    if rss_jobs:
        # Memory is measured in separate processes and not timed, so two can run at once.
        print("rss workloads (child processes)", file=sys.stderr)
        cap = 10.0 if args.quick else args.rss_cap
        with ThreadPoolExecutor(max_workers=max(1, min(2, os.cpu_count() or 1))) as pool:
            futures = [
                (
                    result,
                    workload,
                    pool.submit(
                        measure_rss,
                        module,
                        workload,
                        variant,
                        loop,
                        sizes=result.sizes,
                        time_cap_s=cap,
                    ),
                )
                for module, workload, result, variant, loop in rss_jobs
            ]
            for result, workload, future in futures:
                outcome = future.result()
                _progress(outcome, workload.metric)
                result.outcomes.append(outcome)
    for module, report in found.reports:
        short = module.rsplit(".", 1)[-1].removeprefix("bench_")
        if args.goals or (
            args.only and short not in args.only and f"bench_{short}" not in args.only
        ):
            continue
        print(f"{module} (measures itself)", file=sys.stderr)
        try:
            data = report(quick=args.quick)
        except Exception as exc:  # an unavailable service or extra is a note, not a failure
            results.modules.append(ModuleNote(module, f"run failed: {type(exc).__name__}: {exc}"))
            continue
        if isinstance(data, dict):
            results.reports.append(ModuleReport(module, {str(k): v for k, v in data.items()}))
            print(f"  {data}", file=sys.stderr)
    results.workloads.sort(key=lambda w: w.key)
    meta["load_end"] = _load()
    return results


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument(
        "--quick",
        action="store_true",
        help="small n, 3 rounds, output in results/quick/: for iterating on a change",
    )
    parser.add_argument("--loop", choices=(*LOOPS, "both"), default="both")
    parser.add_argument(
        "--rounds",
        type=int,
        help="rounds of timed runs, one run of every variant each, for every workload "
        "(default 7, HTTP workloads 3; quick 3)",
    )
    parser.add_argument(
        "--rep-cap",
        type=float,
        help="seconds one timed run may take before n is reduced (default 0.5, quick 0.05)",
    )
    parser.add_argument(
        "--no-calls", action="store_true", help="skip the Python-calls-per-item counts"
    )
    parser.add_argument(
        "--rss-cap",
        type=float,
        default=40.0,
        help="seconds one memory point may take before larger points are left out",
    )
    parser.add_argument(
        "--only", nargs="+", default=[], help="workload keys or names (W1, chain, flat_map…)"
    )
    parser.add_argument(
        "--goals",
        action="store_true",
        help="only the workloads that carry a performance goal (the goal table's command)",
    )
    parser.add_argument(
        "--out", type=Path, help="output directory (default results/, quick: results/quick/)"
    )
    parser.add_argument("--no-charts", action="store_true", help="skip the PNG charts")
    parser.add_argument(
        "--report-only",
        action="store_true",
        help="redraw results.md and charts from the existing results.json",
    )
    parser.add_argument(
        "--update-readme",
        type=Path,
        metavar="PATH",
        help="replace the text between the bench markers in PATH with the goal table",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point."""
    args = _parser().parse_args(argv)
    if args.rep_cap is None:
        args.rep_cap = 0.05 if args.quick else 0.5
    out: Path = args.out or (RESULTS_DIR / "quick" if args.quick else RESULTS_DIR)
    started = time.perf_counter()
    if args.report_only:
        results = Results.from_json((out / "results.json").read_text(encoding="utf-8"))
    else:
        results = run(args)
    for path in dump(results, out, charts=not args.no_charts):
        print(f"wrote {path}", file=sys.stderr)
    if args.update_readme is not None:
        update_readme(args.update_readme, render_summary(results))
        print(f"updated {args.update_readme}", file=sys.stderr)
    print(f"done in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
