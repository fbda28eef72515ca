"""The whole pipeline command against the bare cost of a Spark session: how much of a run is
work.

Run: ``python -m benchmarks.bench_pipeline [--rounds 5] [--base PATH] [-- PIPELINE OPTIONS]``.

Each round runs, in a fresh process each and in an order that alternates from round to round:

- floor: ``python -c`` that imports PySpark alone, builds a ``local[*]`` session with
  ``SparkSession.builder`` and the settings the pipeline's session gets
  (`reactive_aio.spark.session_settings` with the pipeline's `session_conf`, worked out here and
  written into the command, class archive included) and stops it: what the bare session costs
  by hand, without importing reactive_aio;
- query: the floor's session that also runs the pipeline's one aggregate (the same SQL) over
  the events a pipeline run landed before the rounds (``spark.read.parquet``, collected with
  ``toArrow``), then stops: what Spark's own part of the job costs by hand on a cold JVM, so
  query/floor is the least pipeline/floor any run can reach that has Spark compute its results;
- pipeline: ``python -m reactive_aio_app pipeline --out DIR`` (a fresh ``DIR`` each run) over
  the packaged data set, as a user types it (the options after ``--`` are added);
- base (with ``--base PATH``): the same command with the code of another checkout, say one
  made with ``git archive e81289f | tar -x -C PATH``, so a change and its base are measured in
  one run on the same floor.

Each tree's modules are byte-compiled first, as an installed package's are (a checkout run
with ``PYTHONDONTWRITEBYTECODE`` would compile its sources again in every run).

Each run's wall time, and its CPU time with that of every process it started (the JVM and
PySpark's workers included: this process adopts them as a child subreaper, so they are
reaped, and counted, here), give paired ratios run/floor (and pipeline/query) per round; the
summary lines report their median and spread, and each pipeline's phases (from the summary
it prints) by median.
The acceptance of issue 24 is a median paired wall ratio pipeline/floor of at most 1.6.
"""

from __future__ import annotations

import argparse
import compileall
import ctypes
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parents[1]
_PR_SET_CHILD_SUBREAPER = 36
_FLOOR = """\
import os
os.environ.update({environment!r})
from pyspark.sql import SparkSession
builder = SparkSession.builder.master("local[*]").appName("reactive-aio pipeline")
for key, value in {settings!r}.items():
    builder = builder.config(key, value)
spark = builder.getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
{work}spark.stop()
"""
_QUERY = """\
spark.read.parquet({events!r}).createOrReplaceTempView("events")
spark.sql({sql!r}).toArrow()
"""


def _floor(events: Path | None = None) -> str:
    """The floor's program: the settings and environment `spark_session` would give the
    pipeline's session (the interpreter for PySpark's workers, the loopback address); with
    *events*, the query floor's, which aggregates them as the pipeline does."""
    from reactive_aio.spark import session_settings
    from reactive_aio_app.pipeline import CARRIER_HOURS_SQL, session_conf

    settings = session_settings("local[*]", session_conf("local[*]"))
    environment = {
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
        "SPARK_LOCAL_IP": "127.0.0.1",
    }
    work = "" if events is None else _QUERY.format(events=str(events), sql=CARRIER_HOURS_SQL)
    return _FLOOR.format(environment=environment, settings=settings, work=work)


_PHASES = re.compile(r"^phases: (?P<phases>.*); total (?P<total>[0-9.]+) s$", re.MULTILINE)


def _adopt_orphans() -> None:
    """Make this process the reaper of its descendants whose parent ends first (Linux): the
    JVM a PySpark driver starts is not waited for by it."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def _reap(timeout: float = 60.0) -> None:
    """Wait for every descendant left behind (a JVM ends once its driver's pipe closes)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            if time.monotonic() > deadline:
                raise TimeoutError("a process the run started outlived it")
            time.sleep(0.05)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _env(tree: Path) -> dict[str, str]:
    """The environment that makes a child import the code of *tree*."""
    paths = [str(tree), str(tree / "app")]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(paths))


def _timed(command: Sequence[str], env: dict[str, str], cwd: Path) -> tuple[float, float, str]:
    """Run *command* in *cwd* (not a checkout: ``-m`` and ``-c`` put it first on the path);
    its wall seconds, CPU seconds (all its processes), and stdout."""
    cpu = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    _reap()
    if done.returncode != 0:
        raise RuntimeError(f"{command} exited {done.returncode}: {done.stderr[-3000:]}")
    return wall, _children_cpu() - cpu, done.stdout


def _phases(stdout: str) -> dict[str, float]:
    found = _PHASES.search(stdout)
    if found is None:
        raise RuntimeError(f"no phase line in the summary: {stdout[-2000:]}")
    phases = {
        name: float(seconds)
        for name, seconds in (part.rsplit(" ", 2)[:2] for part in found["phases"].split(", "))
    }
    phases["total"] = float(found["total"])
    return phases


def _spread(values: Sequence[float]) -> dict[str, float]:
    return {
        "median": round(statistics.median(values), 3),
        "min": round(min(values), 3),
        "max": round(max(values), 3),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--base", type=Path, help="another checkout to run the pipeline of")
    parser.add_argument("options", nargs="*", help="added to the pipeline command (after --)")
    args = parser.parse_args(argv)
    _adopt_orphans()
    trees = {"pipeline": _ROOT} | ({} if args.base is None else {"base": args.base.resolve()})
    for tree in trees.values():
        for package in (tree / "reactive_aio", tree / "app" / "reactive_aio_app"):
            compileall.compile_dir(package, quiet=1, workers=0)
    work = Path(tempfile.mkdtemp(prefix="bench-pipeline-"))
    pipeline = [sys.executable, "-m", "reactive_aio_app", "pipeline", *args.options]
    samples: dict[str, list[tuple[float, float]]] = {}
    phases: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    try:
        # The events the query floor reads: landed once, by the same command, untimed.
        _timed([*pipeline, "--out", str(work / "landed")], _env(_ROOT), work)
        programs = {"floor": _floor(), "query": _floor(work / "landed" / "events")}
        for round_ in range(args.rounds):
            order = [*programs, *trees]
            if round_ % 2:
                order.reverse()
            for name in order:
                if name in programs:
                    command = [sys.executable, "-c", programs[name]]
                    wall, cpu, _ = _timed(command, _env(_ROOT), work)
                else:
                    out = work / f"{name}-{round_}"
                    wall, cpu, stdout = _timed(
                        [*pipeline, "--out", str(out)], _env(trees[name]), work
                    )
                    phases[name].append(_phases(stdout))
                    shutil.rmtree(out)
                samples.setdefault(name, []).append((wall, cpu))
                line = {"round": round_, "run": name, "wall_s": round(wall, 2)}
                line |= {"cpu_s": round(cpu, 2), "load_1min": round(os.getloadavg()[0], 2)}
                if name in phases:
                    line["phases_s"] = phases[name][-1]
                print(json.dumps(line), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    pairs = [("query", "floor")]
    pairs += [(name, floor) for name in trees for floor in ("floor", "query")]
    for name, floor_name in pairs:
        runs, floor = samples[name], samples[floor_name]
        summary: dict[str, Any] = {"bench": f"{name}/{floor_name}", "rounds": args.rounds}
        summary["wall_ratio"] = _spread([r[0] / f[0] for r, f in zip(runs, floor, strict=True)])
        summary["cpu_ratio"] = _spread([r[1] / f[1] for r, f in zip(runs, floor, strict=True)])
        summary["wall_s"] = _spread([r[0] for r in runs])
        summary[f"{floor_name}_wall_s"] = _spread([f[0] for f in floor])
        if name in phases:
            summary["phases_median_s"] = {
                key: round(statistics.median(p[key] for p in phases[name]), 2)
                for key in phases[name][0]
            }
        print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
