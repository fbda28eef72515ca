"""reactive_aio against itself: two versions of the library on the same workloads, in one run.

Usage::

    python -m benchmarks.versions BASE [HEAD] [--only W1 W2 W4] [--loop both] [--rounds 7]

*BASE* and *HEAD* are git revisions of this repository (``main``, ``HEAD~3``, a branch) or
directories holding a ``reactive_aio`` package; *HEAD* defaults to the working tree. The
workloads and their variants come from the current ``benchmarks/`` (so both versions run the
same code around the library); only the reactive_aio rows (``role="subject"``) are measured.

Every measurement is one child process that imports the chosen version, warms up, and times
one run: so nothing one version leaves behind (caches, allocator state) reaches the other.
Rounds interleave the versions, their order alternating, and each round yields one paired
ratio HEAD/BASE per row, of CPU time and of wall time. The report gives the median paired
ratio and its spread (lowest to highest); a cost ratio of 1.05 means HEAD takes 5% longer.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import io
import json
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks._harness import LOOPS, ROOT, Workload, loop_factory, unavailable

MODULES = {
    "W1": "benchmarks.bench_chain",
    "W2": "benchmarks.bench_boundary",
    "W4": "benchmarks.bench_multicast",
    "W5": "benchmarks.bench_flat_map",
    "W6": "benchmarks.bench_async_source",
    "W7a": "benchmarks.bench_map_async",
    "W7b": "benchmarks.bench_map_async",
    "W8": "benchmarks.bench_map_async",
}
"""The in-process workloads a version comparison can run, by key."""

_WARMUP_N = 2_000


@dataclass(slots=True)
class Row:
    """One workload variant on one loop: the paired ratios of its rounds."""

    key: str
    variant: str
    loop: str
    skipped: str = ""
    """Why the variant is not compared (one version lacks what it needs)."""
    cpu: dict[str, list[float]] = field(default_factory=lambda: {"base": [], "head": []})
    wall: dict[str, list[float]] = field(default_factory=lambda: {"base": [], "head": []})

    def ratios(self, clock: str) -> list[float]:
        times = self.cpu if clock == "cpu" else self.wall
        return [h / b for b, h in zip(times["base"], times["head"], strict=False) if b > 0]


def _workload(key: str) -> Workload:
    module = importlib.import_module(MODULES[key])
    workloads: Sequence[Workload] = module.WORKLOADS
    return next(w for w in workloads if w.key == key)


def _child(tree: str, key: str, variant_name: str, loop: str, n: int) -> None:
    """Run in a child: import reactive_aio from *tree*, warm up, time one run, print JSON."""
    sys.path.insert(0, tree)
    import reactive_aio

    if not Path(reactive_aio.__file__).resolve().is_relative_to(Path(tree).resolve()):
        raise SystemExit(f"reactive_aio imported from {reactive_aio.__file__}, not {tree}")
    workload = _workload(key)
    variant = workload.variant(variant_name)
    reason = unavailable(variant.needs)
    if reason is not None:  # (a new operator, say, that the other version lacks)
        print(json.dumps({"skip": reason}))
        return
    expected = workload.expected(n)
    with asyncio.Runner(loop_factory=loop_factory(loop)) as runner:
        runner.run(variant.run(_WARMUP_N))
        cpu, wall = time.process_time(), time.perf_counter()
        result = runner.run(variant.run(n))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if result != expected:
        raise SystemExit(f"{key} {variant_name}: wrong result {result!r}, expected {expected!r}")
    print(json.dumps({"cpu": cpu, "wall": wall}))


@contextmanager
def _tree(version: str) -> Iterator[str]:
    """A directory whose ``reactive_aio`` is *version* (a directory, or a git revision)."""
    if version == "." or Path(version, "reactive_aio").is_dir():
        yield str(Path(version).resolve())
        return
    with tempfile.TemporaryDirectory(prefix="reactive_aio-version-") as folder:
        archive = subprocess.run(
            ["git", "archive", "--format=tar", version, "reactive_aio"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(folder, filter="data")
        yield folder


def _measure(tree: str, row: Row, n: int) -> tuple[float, float] | str:
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.versions", "--child", tree, row.key, row.variant,
         row.loop, str(n)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )  # fmt: skip
    if proc.returncode != 0:
        raise SystemExit(f"{row.key} {row.variant} ({row.loop}) failed:\n{proc.stderr[-2000:]}")
    times = json.loads(proc.stdout.splitlines()[-1])
    if "skip" in times:
        return str(times["skip"])
    return times["cpu"], times["wall"]


def _spread(values: list[float]) -> str:
    return f"{min(values):.2f} to {max(values):.2f}" if values else "-"


def compare(
    base: str, head: str, keys: Sequence[str], loops: Sequence[str], rounds: int, n: int | None
) -> str:
    """Measure and return the report as a Markdown table."""
    rows = [
        Row(key, variant.name, loop)
        for key in keys
        for variant in _workload(key).variants
        if variant.role == "subject"
        for loop in loops
    ]
    sizes = {key: n or _workload(key).n for key in keys}
    with _tree(base) as base_tree, _tree(head) as head_tree:
        trees = {"base": base_tree, "head": head_tree}
        for index in range(rounds):
            order = ("base", "head") if index % 2 == 0 else ("head", "base")
            for row in rows:
                for side in order:
                    if row.skipped:
                        break
                    measured = _measure(trees[side], row, sizes[row.key])
                    if isinstance(measured, str):
                        row.skipped = f"{side}: {measured}"
                        break
                    row.cpu[side].append(measured[0])
                    row.wall[side].append(measured[1])
            print(f"round {index + 1}/{rounds} done", file=sys.stderr)
    lines = [
        f"HEAD = {head}, BASE = {base}; {rounds} rounds, versions interleaved, order alternating; "
        "ratios are HEAD/BASE per round (cost: below 1 is faster)",
        "",
        "| workload | variant | loop | n | CPU ratio median | spread | wall ratio median | spread |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        if row.skipped:
            lines.append(
                f"| {row.key} | {row.variant} | {row.loop} | - | skipped ({row.skipped}) |"
            )
            continue
        by_cpu, by_wall = row.ratios("cpu"), row.ratios("wall")
        lines.append(
            f"| {row.key} | {row.variant} | {row.loop} | {sizes[row.key]:,} "
            f"| {statistics.median(by_cpu):.3f} | {_spread(by_cpu)} "
            f"| {statistics.median(by_wall):.3f} | {_spread(by_wall)} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--child"]:
        tree, key, variant, loop, n = args[1:]
        _child(tree, key, variant, loop, int(n))
        return 0
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.versions",
        description="Two versions of reactive_aio on the same workloads, interleaved.",
    )
    parser.add_argument("base", help="git revision or directory of the version to compare with")
    parser.add_argument("head", nargs="?", default=".", help="default: the working tree")
    parser.add_argument("--only", nargs="+", choices=sorted(MODULES), default=["W1", "W2", "W4"])
    parser.add_argument("--loop", choices=[*LOOPS, "both"], default="both")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--n", type=int, help="items per run (default: each workload's n)")
    options = parser.parse_args(args)
    loops = LOOPS if options.loop == "both" else (options.loop,)
    print(compare(options.base, options.head, options.only, loops, options.rounds, options.n))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
