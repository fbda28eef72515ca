"""Turn measured outcomes into ``results.json``, ``results.md``, PNG charts and a README section.

Everything here works from the JSON alone, so ``python -m benchmarks --report-only`` can redraw
the tables and charts without measuring again.
"""

from __future__ import annotations

import dataclasses
import json
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from benchmarks._harness import LOOPS, Clock, Goal, Metric, Outcome, Role, Workload

__all__ = (
    "MARK_END",
    "MARK_START",
    "ModuleNote",
    "ModuleReport",
    "Ratio",
    "Results",
    "VariantInfo",
    "WorkloadResult",
    "render_markdown",
    "update_readme",
    "write_charts",
)

MARK_START = "<!-- bench:start -->"
MARK_END = "<!-- bench:end -->"
TIMES = "\N{MULTIPLICATION SIGN}"
DASH = "\N{EN DASH}"
RSS_FLOOR_MIB = 1.0
"""W3 ratios divide by at least this much growth, so a flat line does not divide by noise."""


@dataclass(slots=True)
class VariantInfo:
    """A variant as the report needs it: its label, role, path and the rows it is compared to."""

    name: str
    role: Role
    note: str
    versus: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Ratio:
    """Paired ratios of one variant against another: one per round, both runs in that round.

    Each is how many times cheaper per item the first variant was than the second in the same
    round (above 1 favours the first); the median and the extremes summarise them.
    """

    per_round: tuple[float, ...]

    @property
    def median(self) -> float:
        """The median over rounds."""
        return statistics.median(self.per_round)

    @property
    def low(self) -> float:
        """The smallest ratio of any round."""
        return min(self.per_round)

    @property
    def high(self) -> float:
        """The largest ratio of any round."""
        return max(self.per_round)

    @property
    def spread(self) -> float:
        """(high - low) / median: how far apart the rounds were."""
        return (self.high - self.low) / self.median


@dataclass(slots=True)
class WorkloadResult:
    """One workload with every outcome measured for it."""

    key: str
    name: str
    title: str
    description: str
    metric: Metric
    kind: str
    module: str
    n: int
    sizes: list[int]
    reference: str | None
    variants: list[VariantInfo]
    outcomes: list[Outcome] = field(default_factory=list)
    clock: Clock = "cpu"
    items_per_n: int = 1
    goals: list[Goal] = field(default_factory=list)
    load: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)
    """Load average (1 min) at the start and at the end of the measurement on each loop."""

    @classmethod
    def start(cls, module: str, workload: Workload, *, quick: bool) -> WorkloadResult:
        """An empty result for *workload*, sized for a quick or full run."""
        return cls(
            key=workload.key,
            name=workload.name,
            title=workload.title,
            description=workload.description,
            metric=workload.metric,
            kind=workload.kind,
            module=module,
            n=workload.quick_n if quick else workload.n,
            sizes=list(workload.quick_sizes if quick else workload.sizes),
            reference=workload.reference,
            variants=[
                VariantInfo(v.name, v.role, v.note, list(v.versus)) for v in workload.variants
            ],
            clock=workload.clock,
            items_per_n=workload.items_per_n,
            goals=list(workload.goals),
        )

    def outcome(self, variant: str, loop: str) -> Outcome | None:
        """The outcome of *variant* on *loop*, if it was run."""
        for outcome in self.outcomes:
            if outcome.variant == variant and outcome.loop == loop:
                return outcome
        return None

    @property
    def loops(self) -> list[str]:
        """Loops this workload ran on, in report order."""
        seen = {o.loop for o in self.outcomes}
        return [loop for loop in LOOPS if loop in seen]

    def info(self, name: str) -> VariantInfo | None:
        """The variant named *name*."""
        return next((v for v in self.variants if v.name == name), None)

    def ratio(self, first: str, second: str, loop: str, clock: Clock | None = None) -> Ratio | None:
        """Paired ratios of *first* against *second* on *loop*, on the workload's clock.

        Round ``i`` of one variant ran in the same round as round ``i`` of the other, so both
        saw the same load; the ratio compares per-input costs (the sizes may differ).
        """
        a, b = self.outcome(first, loop), self.outcome(second, loop)
        if a is None or b is None or a.status != "ok" or b.status != "ok":
            return None
        use = clock or self.clock
        a_s, b_s = (a.cpu_s, b.cpu_s) if use == "cpu" else (a.wall_s, b.wall_s)
        pairs = [(x / a.n, y / b.n) for x, y in zip(a_s, b_s, strict=False) if x > 0 and y > 0]
        if not pairs:
            return None
        return Ratio(tuple(theirs / ours for ours, theirs in pairs))

    def compared(self, subject: VariantInfo) -> list[VariantInfo]:
        """The rows *subject*'s ratios are taken against."""
        if subject.versus:
            return [v for v in self.variants if v.name in subject.versus]
        return [v for v in self.variants if v.name != subject.name]

    @property
    def subjects(self) -> list[VariantInfo]:
        """The reactive_aio rows."""
        return [v for v in self.variants if v.role == "subject"]


@dataclass(slots=True)
class ModuleNote:
    """A ``bench_*.py`` module that is not part of the tables, and why.

    ``kind`` is ``"standalone"`` for a script without ``WORKLOADS`` (run it directly) and
    ``"failed"`` for one that did not import (usually a missing optional dependency).
    """

    module: str
    reason: str
    kind: Literal["standalone", "failed"] = "failed"


@dataclass(slots=True)
class ModuleReport:
    """What a self-measuring module (``run(quick: bool) -> dict``) returned."""

    module: str
    data: dict[str, object]


@dataclass(slots=True)
class Results:
    """Everything one run produced."""

    meta: dict[str, object]
    workloads: list[WorkloadResult]
    modules: list[ModuleNote] = field(default_factory=list)
    reports: list[ModuleReport] = field(default_factory=list)

    def to_json(self) -> str:
        """Serialise to the ``results.json`` format."""
        data = {
            "meta": self.meta,
            "modules": [
                {"module": m.module, "reason": m.reason, "kind": m.kind} for m in self.modules
            ],
            "reports": [{"module": r.module, "data": r.data} for r in self.reports],
            "workloads": [
                {
                    "key": w.key,
                    "name": w.name,
                    "title": w.title,
                    "description": w.description,
                    "metric": w.metric,
                    "kind": w.kind,
                    "module": w.module,
                    "n": w.n,
                    "sizes": w.sizes,
                    "reference": w.reference,
                    "clock": w.clock,
                    "items_per_n": w.items_per_n,
                    "load": {loop: list(pair) for loop, pair in w.load.items()},
                    "goals": [dataclasses.asdict(g) for g in w.goals],
                    "variants": [
                        {"name": v.name, "role": v.role, "note": v.note, "versus": v.versus}
                        for v in w.variants
                    ],
                    "outcomes": [o.to_json() for o in w.outcomes],
                }
                for w in self.workloads
            ],
        }
        return json.dumps(data, indent=1, ensure_ascii=False) + "\n"

    @classmethod
    def from_json(cls, text: str) -> Results:
        """Read a ``results.json`` written by `to_json`."""
        data = json.loads(text)
        workloads = [
            WorkloadResult(
                key=w["key"],
                name=w["name"],
                title=w["title"],
                description=w["description"],
                metric=w["metric"],
                kind=w["kind"],
                module=w["module"],
                n=w["n"],
                sizes=list(w["sizes"]),
                reference=w["reference"],
                variants=[
                    VariantInfo(v["name"], v["role"], v["note"], list(v.get("versus", [])))
                    for v in w["variants"]
                ],
                outcomes=[Outcome.from_json(o) for o in w["outcomes"]],
                clock="wall" if w.get("clock") == "wall" else "cpu",
                items_per_n=int(w.get("items_per_n", 1)),
                goals=[Goal(**g) for g in w.get("goals", [])],
                load={loop: (pair[0], pair[1]) for loop, pair in w.get("load", {}).items()},
            )
            for w in data["workloads"]
        ]
        modules = [
            ModuleNote(
                m["module"], m["reason"], "standalone" if m["kind"] == "standalone" else "failed"
            )
            for m in data["modules"]
        ]
        reports = [ModuleReport(r["module"], dict(r["data"])) for r in data.get("reports", [])]
        return cls(meta=dict(data["meta"]), workloads=workloads, modules=modules, reports=reports)


# -- numbers --------------------------------------------------------------------------------------


def _fmt_value(value: float, metric: Metric) -> str:
    if metric == "ns/item":
        return f"{value:,.0f}"
    if metric == "items/s":
        if value >= 1e6:
            return f"{value / 1e6:.2f} M"
        return f"{value / 1e3:,.0f} k"
    return f"{value:,.1f}"


def _fmt_ratio(ratio: float) -> str:
    if ratio >= 10:
        return f"{ratio:,.0f}{TIMES}"
    if ratio >= 1:
        return f"{ratio:.2f}{TIMES}" if ratio < 2 else f"{ratio:.1f}{TIMES}"
    return f"{ratio:.2f}{TIMES}"


def _fmt_spread(ratio: Ratio, invert: bool = False) -> str:
    """``median (low to high)``, or of the inverses (cost ratio instead of advantage)."""
    if invert:
        mid, low, high = 1 / ratio.median, 1 / ratio.high, 1 / ratio.low
    else:
        mid, low, high = ratio.median, ratio.low, ratio.high
    if len(ratio.per_round) == 1:
        return _fmt_ratio(mid)
    return f"{_fmt_ratio(mid)} ({_fmt_ratio(low).rstrip(TIMES)}{DASH}{_fmt_ratio(high)})"


def _fmt_any(value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, int) or value >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def _fmt_n(n: int) -> str:
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n >= 1_000 and n % 1_000 == 0:
        return f"{n // 1_000}k"
    return f"{n:,}"


def _fmt_load(value: object) -> str:
    return "?" if not isinstance(value, int | float) else f"{value:.1f}"


def _cpu_ns(outcome: Outcome, items_per_n: int) -> float | None:
    if not outcome.cpu_s or not outcome.n:
        return None
    return statistics.median(outcome.cpu_s) / (outcome.n * items_per_n) * 1e9


def advantage(metric: Metric, reference: float, other: float) -> float:
    """How many times better the reference is than *other* (> 1 favours the reference)."""
    if metric == "items/s":
        return reference / other
    if metric == "MiB":
        return max(other, RSS_FLOOR_MIB) / max(reference, RSS_FLOOR_MIB)
    return other / reference


# -- markdown -------------------------------------------------------------------------------------


def _label(info: VariantInfo) -> str:
    if info.role == "subject":
        return f"**{info.name}**"
    if info.role == "floor":
        return f"{info.name} *(floor)*"
    return info.name


def _clock_words(clock: Clock) -> str:
    return "CPU time" if clock == "cpu" else "wall time"


def _time_table(w: WorkloadResult) -> list[str]:
    loops = w.loops
    better = "higher" if w.metric == "items/s" else "lower"
    wall = "items/s" if w.metric == "items/s" else "wall ns/item"
    lines = [f"### {w.key} {w.name}: {w.title}", ""]
    lines.append(
        f"{w.description} n = {w.n:,}. *{wall}* is the median over rounds ({better} is better); "
        "*CPU ns/item* counts this process's CPU time"
        + (" and the server's" if w.clock == "wall" else "")
        + "; *calls/item* are Python calls per item (asyncio / uvloop)."
    )
    lines.append("")
    head = "| variant |" + "".join(f" {loop} {wall} | {loop} CPU ns/item |" for loop in loops)
    lines += [head + " calls/item |", "| --- |" + " ---: | ---: |" * len(loops) + " ---: |"]
    reduced = False
    for info in w.variants:
        cells = []
        calls = []
        for loop in loops:
            outcome = w.outcome(info.name, loop)
            if outcome is None or outcome.status != "ok" or outcome.value is None:
                cells += ["—", "—"]
                calls.append("—")
                continue
            text = _fmt_value(outcome.value, w.metric)
            if outcome.n != w.n:
                text += "†"
                reduced = True
            cpu = _cpu_ns(outcome, w.items_per_n)
            cells += [text, "—" if cpu is None else f"{cpu:,.0f}"]
            per = outcome.calls_per_item
            calls.append("—" if per is None else f"{per:.1f}")
        lines.append(f"| {_label(info)} | " + " | ".join(cells) + f" | {' / '.join(calls)} |")
    if reduced:
        lines += ["", "† measured on a smaller n so that one run stays short (see results.json)."]
    lines += ["", *_ratio_table(w)]
    lines += ["", "Paths:", ""]
    lines += [f"- {info.name}: {info.note}" for info in w.variants if info.note]
    return lines


def _ratio_table(w: WorkloadResult) -> list[str]:
    """Per subject and loop: median paired ratio against every other row, with its range."""
    loops = w.loops
    subjects = [s for s in w.subjects if any(w.outcome(s.name, loop) for loop in loops)]
    if not subjects:
        return []
    lines = [
        f"How many times cheaper per item ({_clock_words(w.clock)}) each reactive_aio row was "
        f"than the row on the left, run against run in the same round: median (lowest{DASH}highest "
        f"round); above 1{TIMES} favours reactive_aio.",
        "",
    ]
    columns = [(s, loop) for s in subjects for loop in loops]
    head = "| vs |" + "".join(f" {s.name}, {loop} |" for s, loop in columns)
    lines += [head, "| --- |" + " ---: |" * len(columns)]
    for info in w.variants:
        cells = []
        for subject, loop in columns:
            ratio = None
            if info in w.compared(subject):
                ratio = w.ratio(subject.name, info.name, loop)
            cells.append("" if ratio is None else _fmt_spread(ratio))
        if any(cells):
            lines.append(f"| {_label(info)} | " + " | ".join(cells) + " |")
    return lines


def _rss_table(w: WorkloadResult) -> list[str]:
    loops = w.loops
    lines = [f"### {w.key} {w.name}: {w.title}", ""]
    lines.append(
        f"Peak RSS growth in MiB, lower is better (one child process per point). {w.description} "
        f"Cells read {' / '.join(loops)}."
    )
    lines.append("")
    head = "| variant |" + "".join(f" n={_fmt_n(n)} |" for n in w.sizes) + " vs, at largest n |"
    lines += [head, "| --- |" + " ---: |" * (len(w.sizes) + 1)]
    for info in w.variants:
        cells = []
        for n in w.sizes:
            parts = []
            for loop in loops:
                outcome = w.outcome(info.name, loop)
                point = None
                if outcome is not None:
                    point = next((p for p in outcome.points if p.n == n), None)
                parts.append("—" if point is None else f"{point.delta_mib:,.1f}")
            cells.append(" / ".join(parts))
        ratios = []
        for loop in loops:
            outcome = w.outcome(info.name, loop)
            ref = w.outcome(w.reference, loop) if w.reference else None
            if info.name == w.reference or outcome is None or ref is None:
                continue
            common = {p.n for p in outcome.points} & {p.n for p in ref.points}
            if not common:
                continue
            n = max(common)
            mine = next(p for p in outcome.points if p.n == n)
            theirs = next(p for p in ref.points if p.n == n)
            ratios.append(_fmt_ratio(advantage("MiB", theirs.delta_mib, mine.delta_mib)))
        cells.append(" / ".join(ratios))
        lines.append(f"| {_label(info)} | " + " | ".join(cells) + " |")
    lines += ["", "Paths:", ""]
    lines += [f"- {info.name}: {info.note}" for info in w.variants if info.note]
    return lines


def _not_measured(w: WorkloadResult) -> list[str]:
    notes: dict[str, str] = {}
    for outcome in w.outcomes:
        if outcome.status != "ok":
            notes.setdefault(outcome.variant, f"{outcome.status}: {outcome.reason}")
        elif outcome.reason:
            notes.setdefault(outcome.variant, f"{outcome.loop}: {outcome.reason}")
    if not notes:
        return []
    return ["", *(f"- {name}: {reason}" for name, reason in notes.items())]


def _goal_rows(results: Results) -> list[tuple[WorkloadResult, Goal]]:
    return [(w, g) for w in results.workloads for g in w.goals]


def _goal_table(results: Results) -> list[str]:
    """Each goal against what this run measured, per loop."""
    rows = _goal_rows(results)
    if not rows:
        return []
    loops = [loop for loop in LOOPS if any(loop in w.loops for w, _ in rows)]
    lines = [
        "### Goals",
        "",
        "Each goal compares a reactive_aio row with another row of its workload: *cost* is "
        "reactive_aio's cost per item over the other's (lower is better), *speed* the inverse "
        f"(higher is better); median of the paired ratios (lowest{DASH}highest round), on the "
        "workload's clock (CPU time, or wall time for HTTP) unless the goal names its own.",
        "",
        "| goal | workload | target | was |" + "".join(f" {loop} |" for loop in loops) + " met |",
        "| --- | --- | --- | --- |" + " ---: |" * len(loops) + " --- |",
    ]
    for w, goal in rows:
        cells = []
        met = True
        for loop in loops:
            ratio = w.ratio(goal.subject, goal.peer, loop, goal.clock)
            if ratio is None:
                cells.append("—")
                met = False
                continue
            cost = goal.measure == "cost"
            cells.append(_fmt_spread(ratio, invert=cost))
            value = 1 / ratio.median if cost else ratio.median
            met = met and (value <= goal.target if cost else value >= goal.target)
        op = "≤" if goal.measure == "cost" else "≥"
        target = f"{goal.measure} {op} {goal.target:.2f}{TIMES}"
        if goal.clock is not None and goal.clock != w.clock:
            target += f" ({_clock_words(goal.clock)})"
        verdict = "yes" if met else "no"
        lines.append(
            f"| {goal.text} | {w.key} | {target} | "
            + ("—" if goal.was is None else _fmt_ratio(goal.was))
            + " | "
            + " | ".join(cells)
            + f" | {verdict} |"
        )
    return lines


def _noise_table(results: Results) -> list[str]:
    """How noisy each measurement was: load, stolen time, spread of runs and of ratios."""
    timed = [w for w in results.workloads if w.kind == "time" and w.outcomes]
    if not timed:
        return []
    lines = [
        "### Noise",
        "",
        "Per workload and loop: the load average (1 min) when it started and ended; *wall/CPU*, "
        "the median of wall time over CPU time of the in-process runs (above 1 when other "
        "processes took the core); *run spread*, the median over rows of (slowest - fastest "
        "round) / median round; *ratio spread*, the same for the paired ratios reported above.",
        "",
        "| workload | loop | load | wall/CPU | run spread | ratio spread |",
        "| --- | --- | --- | ---: | ---: | ---: |",
    ]
    for w in timed:
        for loop in w.loops:
            ok = [o for o in w.outcomes if o.loop == loop and o.status == "ok" and o.cpu_s]
            start, end = w.load.get(loop, (None, None))
            stolen = [x / y for o in ok for x, y in zip(o.wall_s, o.cpu_s, strict=False) if y]
            samples = [o.cpu_s if w.clock == "cpu" else o.wall_s for o in ok]
            runs = [(max(s) - min(s)) / statistics.median(s) for s in samples if len(s) > 1]
            spreads = [
                r.spread
                for s in w.subjects
                for other in w.compared(s)
                if (r := w.ratio(s.name, other.name, loop)) is not None and len(r.per_round) > 1
            ]
            lines.append(
                f"| {w.key} | {loop} | {_fmt_load(start)} → {_fmt_load(end)} | "
                + ("—" if w.clock == "wall" or not stolen else f"{statistics.median(stolen):.2f}")
                + " | "
                + ("—" if not runs else f"{statistics.median(runs):.0%}")
                + " | "
                + ("—" if not spreads else f"{statistics.median(spreads):.0%}")
                + " |"
            )
    return lines


def render_markdown(results: Results) -> str:
    """The ``results.md`` text, also what goes between the README markers."""
    meta = results.meta
    packages = meta.get("packages", {})
    assert isinstance(packages, dict)
    versions = ", ".join(
        f"{name} {version}" for name, version in packages.items() if version != "not installed"
    )
    lines = [
        "<!-- generated by `python -m benchmarks`; edit benchmarks/_report.py, not this text -->",
        "",
        f"Measured {meta.get('date', '?')} on {meta.get('machine', '?')}, Python "
        f"{meta.get('python', '?')}, reactive_aio {meta.get('reactive_aio', '?')}; {versions}. "
        f"{'Quick run (small n). ' if meta.get('quick') else ''}"
        f"Every variant is checked and warmed up, then timed in {meta.get('rounds', '?')} rounds "
        "(HTTP: as its table says), one run of each per round, the order reversed every other "
        "round. Load average "
        f"{_fmt_load(meta.get('load_start'))} at the start, {_fmt_load(meta.get('load_end'))} at "
        "the end; the noise table below says how much that moved the figures.",
        "",
        "Every peer runs the path its own users write for speed, named in its row and spelled out "
        "under each table, with the same user functions; where that path gives up demand or a "
        "bound, its note says so. *Floors* are hand-written generator loops: the least the same "
        "work costs with no library.",
    ]
    goals = _goal_table(results)
    if goals:
        lines += ["", *goals]
    for w in results.workloads:
        lines.append("")
        lines += _rss_table(w) if w.kind == "rss" else _time_table(w)
        lines += _not_measured(w)
    for report in results.reports:
        lines += ["", f"### {report.module.rsplit('.', 1)[-1]}: as measured by `{report.module}`"]
        lines += ["", "| measure | value |", "| --- | ---: |"]
        lines += [f"| {key} | {_fmt_any(value)} |" for key, value in report.data.items()]
    noise = _noise_table(results)
    if noise:
        lines += ["", *noise]
    scripts = [f"`{m.module}`" for m in results.modules if m.kind == "standalone"]
    failed = [f"- `{m.module}`: {m.reason}" for m in results.modules if m.kind == "failed"]
    if scripts:
        lines += ["", f"Standalone scripts, run on their own: {', '.join(scripts)}."]
    if failed:
        lines += ["", "Benchmark modules not run:", "", *failed]
    return "\n".join(lines) + "\n"


def update_readme(path: Path, markdown: str) -> None:
    """Replace the text between the bench markers in *path* with *markdown*."""
    text = path.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(MARK_START) + r".*?" + re.escape(MARK_END), re.DOTALL)
    if not pattern.search(text):
        raise ValueError(f"{path} has no {MARK_START} … {MARK_END} section")
    replacement = f"{MARK_START}\n{markdown.rstrip()}\n{MARK_END}"
    path.write_text(pattern.sub(lambda _: replacement, text, count=1), encoding="utf-8")


# -- charts ---------------------------------------------------------------------------------------


def write_charts(results: Results, out_dir: Path) -> list[Path]:
    """One PNG per workload; returns the paths written. Needs matplotlib."""
    import matplotlib

    matplotlib.use("Agg")
    written = []
    for w in results.workloads:
        path = out_dir / f"{w.key.lower()}_{w.name}.png"
        if w.kind == "rss":
            _rss_chart(w, path)
        else:
            _time_chart(w, path)
        written.append(path)
    return written


def _time_chart(w: WorkloadResult, path: Path) -> None:
    import matplotlib.pyplot as plt

    loops = w.loops

    # Bars show the figure the ratios use: CPU ns per item, or items per second of wall time.
    def shown(outcome: Outcome | None) -> float:
        if outcome is None or outcome.status != "ok":
            return 0.0
        if w.clock == "wall":
            return outcome.value or 0.0
        return _cpu_ns(outcome, w.items_per_n) or 0.0

    names = [v.name for v in w.variants if any(shown(w.outcome(v.name, loop)) for loop in loops)]
    fig, ax = plt.subplots(figsize=(8, 0.5 + 0.45 * max(len(names), 1) * max(len(loops), 1)))
    height = 0.8 / max(len(loops), 1)
    metric: Metric = "items/s" if w.clock == "wall" else "ns/item"
    for k, loop in enumerate(loops):
        values = [shown(w.outcome(name, loop)) for name in names]
        ys = [i + k * height for i in range(len(names))]
        bars = ax.barh(ys, values, height=height, label=loop)
        ax.bar_label(bars, labels=[_fmt_value(v, metric) for v in values], padding=3, fontsize=7)
    ax.set_yticks([i + height * (len(loops) - 1) / 2 for i in range(len(names))], labels=names)
    ax.invert_yaxis()
    ax.set_xscale("log")
    if w.clock == "wall":
        ax.set_xlabel("items/s, wall time (log scale, higher is better)")
    else:
        ax.set_xlabel("CPU ns/item (log scale, lower is better)")
    ax.set_title(f"{w.key} {w.name}: {w.title}", fontsize=9)
    ax.legend(fontsize=8)
    ax.margins(x=0.15)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _rss_chart(w: WorkloadResult, path: Path) -> None:
    import matplotlib.pyplot as plt

    loops = w.loops or list(LOOPS[:1])
    fig, axes = plt.subplots(1, len(loops), figsize=(5 * len(loops), 4), squeeze=False)
    for ax, loop in zip(axes[0], loops, strict=True):
        # The reference is drawn last and on top: flat lines near 0 MiB overlap, and the
        # reference must not disappear under the others.
        infos = sorted(w.variants, key=lambda info: info.name == w.reference)
        for info in infos:
            outcome = w.outcome(info.name, loop)
            if outcome is None or not outcome.points:
                continue
            xs = [p.n for p in outcome.points]
            ys = [p.delta_mib for p in outcome.points]
            if info.name == w.reference:
                ax.plot(
                    xs,
                    ys,
                    marker="D",
                    markersize=7,
                    linewidth=3,
                    color="black",
                    zorder=10,
                    label=f"{info.name} (on top)",
                )
            else:
                ax.plot(xs, ys, marker="o", linewidth=1.2, alpha=0.8, label=info.name)
        ax.set_title(f"{loop}", fontsize=9)
        ax.set_xticks(w.sizes, labels=[_fmt_n(n) for n in w.sizes])
        ax.set_yscale("symlog", linthresh=1.0)
        ax.set_ylim(bottom=0)
        ax.set_xlabel("items (n)")
        ax.set_ylabel("peak RSS growth (MiB, linear below 1, log above)")
        ax.grid(alpha=0.3)
        handles, labels = ax.get_legend_handles_labels()
        ax.legend(handles[::-1], labels[::-1], fontsize=7, loc="center right")
    fig.suptitle(f"{w.key} {w.name}: {w.title}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def dump(results: Results, out_dir: Path, *, charts: bool) -> Sequence[Path]:
    """Write ``results.json``, ``results.md`` and (optionally) the charts into *out_dir*."""
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / "results.json"
    md_path = out_dir / "results.md"
    json_path.write_text(results.to_json(), encoding="utf-8")
    md_path.write_text(render_markdown(results), encoding="utf-8")
    written = [json_path, md_path]
    if charts:
        written += write_charts(results, out_dir)
    return written
