"""``python benchmarks/bench_<name>.py``: run one module's workloads and print a small table.

By default only reactive_aio and the floors run (the quick answer to "did my change help?");
``--peers`` adds the other libraries. The full comparison with reports is ``python -m benchmarks``.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Sequence

from benchmarks._harness import LOOPS, Outcome, Workload, measure_time

__all__ = ("standalone",)


def _format(outcome: Outcome, metric: str) -> str:
    if outcome.status != "ok" or outcome.value is None:
        return f"{outcome.status}: {outcome.reason}"
    cpu = f", CPU {outcome.cpu_value:,.0f} {metric}" if outcome.cpu_value is not None else ""
    return f"{outcome.value:,.0f} {metric}{cpu}  (n={outcome.n:,}, {len(outcome.wall_s)} rounds)"


def standalone(workloads: Sequence[Workload], argv: Sequence[str]) -> int:
    """Command-line entry point shared by the ``bench_*.py`` modules."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, help="items per run (default: the workload's full size)")
    parser.add_argument("--loop", choices=(*LOOPS, "both"), default="both")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--peers", action="store_true", help="also run the other libraries")
    parser.add_argument("--quick", action="store_true", help="small n, 3 reps")
    args = parser.parse_args(argv)
    loops = LOOPS if args.loop == "both" else (args.loop,)
    for workload in workloads:
        if workload.kind != "time":
            print(f"{workload.key} {workload.title}: measured by `python -m benchmarks` only")
            continue
        n = args.n or (workload.quick_n if args.quick else workload.n)
        rounds = 3 if args.quick else args.rounds
        print(f"{workload.key} {workload.title}  [{workload.metric}]")
        variants = [v for v in workload.variants if args.peers or v.role != "peer"]
        for loop in loops:
            print(f"  {loop}:")
            outcomes = measure_time(
                workload,
                variants,
                loop,
                n=n,
                rounds=rounds,
                rep_cap_s=2.0 if args.peers else float("inf"),
                min_n=min(n, workload.quick_n),
            )
            for outcome in outcomes:
                print(f"    {outcome.variant:<40} {_format(outcome, workload.metric)}")
            clock = {o.variant: o.cpu_s if workload.clock == "cpu" else o.wall_s for o in outcomes}
            sizes = {o.variant: o.n for o in outcomes}
            for subject in (v.name for v in workload.variants if v.role == "subject"):
                for floor in (v.name for v in workload.variants if v.role == "floor"):
                    ratios = [
                        (ours / sizes[subject]) / (theirs / sizes[floor])
                        for ours, theirs in zip(clock[subject], clock[floor], strict=False)
                    ]
                    if ratios:
                        print(
                            f"    {subject} costs {statistics.median(ratios):.2f}x the {floor}"
                            f" ({workload.clock}, median of {len(ratios)} paired rounds)"
                        )
    return 0
