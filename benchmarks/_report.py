"""Turn measured outcomes into ``results.json``, ``results.md``, PNG charts and a README section.

Everything here works from the JSON alone, so ``python -m benchmarks --report-only`` can redraw
the tables and charts without measuring again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from benchmarks._harness import LOOPS, Metric, Outcome, Role, Workload

__all__ = (
    "MARK_END",
    "MARK_START",
    "ModuleNote",
    "ModuleReport",
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
RSS_FLOOR_MIB = 1.0
"""W3 ratios divide by at least this much growth, so a flat line does not divide by noise."""


@dataclass(slots=True)
class VariantInfo:
    """A variant as the report needs it: its label, role and a one-line description."""

    name: str
    role: Role
    note: str


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
            variants=[VariantInfo(v.name, v.role, v.note) for v in workload.variants],
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
                    "variants": [
                        {"name": v.name, "role": v.role, "note": v.note} for v in w.variants
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
                variants=[VariantInfo(v["name"], v["role"], v["note"]) for v in w["variants"]],
                outcomes=[Outcome.from_json(o) for o in w["outcomes"]],
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
        return f"{ratio:.1f}{TIMES}"
    return f"{ratio:.2f}{TIMES}"


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


def advantage(metric: Metric, reference: float, other: float) -> float:
    """How many times better the reference is than *other* (> 1 favours the reference)."""
    if metric == "items/s":
        return reference / other
    if metric == "MiB":
        return max(other, RSS_FLOOR_MIB) / max(reference, RSS_FLOOR_MIB)
    return other / reference


# -- markdown -------------------------------------------------------------------------------------


def _label(info: VariantInfo, reference: str | None) -> str:
    if info.name == reference:
        return f"**{info.name}**"
    if info.role == "floor":
        return f"{info.name} *(floor)*"
    return info.name


def _time_table(w: WorkloadResult) -> list[str]:
    loops = w.loops
    better = "higher" if w.metric == "items/s" else "lower"
    lines = [f"### {w.key} {w.name}: {w.title}", "", f"{w.metric}, {better} is better. "]
    lines[-1] += f"{w.description} n = {w.n:,}."
    lines.append("")
    head = "| variant |" + "".join(f" {loop} | vs {loop} |" for loop in loops)
    lines += [head, "| --- |" + " ---: | ---: |" * len(loops)]
    reduced = False
    for info in w.variants:
        cells = []
        for loop in loops:
            outcome = w.outcome(info.name, loop)
            if outcome is None or outcome.status != "ok" or outcome.value is None:
                cells += ["—", "—"]
                continue
            text = _fmt_value(outcome.value, w.metric)
            if outcome.n != w.n:
                text += "†"
                reduced = True
            ref = w.outcome(w.reference, loop) if w.reference else None
            if info.name == w.reference or ref is None or ref.value is None:
                cells += [text, ""]
            else:
                cells += [text, _fmt_ratio(advantage(w.metric, ref.value, outcome.value))]
        lines.append(f"| {_label(info, w.reference)} | " + " | ".join(cells) + " |")
    if reduced:
        lines += ["", "† measured on a smaller n so that one run stays short (see results.json)."]
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
        lines.append(f"| {_label(info, w.reference)} | " + " | ".join(cells) + " |")
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


def render_markdown(results: Results) -> str:
    """The ``results.md`` text, also what goes between the README markers."""
    meta = results.meta
    packages = meta.get("packages", {})
    assert isinstance(packages, dict)
    versions = ", ".join(f"{name} {version}" for name, version in packages.items())
    lines = [
        "<!-- generated by `python -m benchmarks`; edit benchmarks/_report.py, not this text -->",
        "",
        f"Measured {meta.get('date', '?')} on {meta.get('machine', '?')}, Python "
        f"{meta.get('python', '?')}, reactive_aio {meta.get('reactive_aio', '?')}; {versions}. "
        f"{'Quick run (small n). ' if meta.get('quick') else ''}"
        f"Median of {meta.get('reps', '?')} runs after a warm-up; "
        f"load average {meta.get('load_start', '?')} at start, {meta.get('load_end', '?')} at end.",
        "",
        "A **vs** column says how many times faster (W3: how many times less memory) the first "
        f"reactive_aio variant is than that row; above 1{TIMES} favours reactive_aio. *Floors* are "
        "hand-written generator loops: the least any library can cost.",
    ]
    for w in results.workloads:
        lines.append("")
        lines += _rss_table(w) if w.kind == "rss" else _time_table(w)
        lines += _not_measured(w)
    for report in results.reports:
        lines += ["", f"### {report.module.rsplit('.', 1)[-1]}: as measured by `{report.module}`"]
        lines += ["", "| measure | value |", "| --- | ---: |"]
        lines += [f"| {key} | {_fmt_any(value)} |" for key, value in report.data.items()]
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
    names = [
        v.name
        for v in w.variants
        if any((o := w.outcome(v.name, loop)) and o.value for loop in loops)
    ]
    fig, ax = plt.subplots(figsize=(8, 0.5 + 0.45 * max(len(names), 1) * max(len(loops), 1)))
    height = 0.8 / max(len(loops), 1)
    for k, loop in enumerate(loops):
        values = []
        for name in names:
            outcome = w.outcome(name, loop)
            values.append(outcome.value if outcome and outcome.value else 0.0)
        ys = [i + k * height for i in range(len(names))]
        bars = ax.barh(ys, values, height=height, label=loop)
        ax.bar_label(bars, labels=[_fmt_value(v, w.metric) for v in values], padding=3, fontsize=7)
    ax.set_yticks([i + height * (len(loops) - 1) / 2 for i in range(len(names))], labels=names)
    ax.invert_yaxis()
    ax.set_xscale("log")
    better = "higher" if w.metric == "items/s" else "lower"
    ax.set_xlabel(f"{w.metric} (log scale, {better} is better)")
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
        for info in w.variants:
            outcome = w.outcome(info.name, loop)
            if outcome is None or not outcome.points:
                continue
            xs = [p.n for p in outcome.points]
            ys = [p.delta_mib for p in outcome.points]
            # Several lines sit at 0 MiB; the reference is drawn above them, not hidden under.
            mine = info.name == w.reference
            ax.plot(
                xs,
                ys,
                marker="D" if mine else "o",
                markersize=7 if mine else 5,
                linewidth=2.5 if mine else 1.2,
                zorder=3 if mine else 2,
                label=info.name,
            )
        ax.set_title(f"{loop}", fontsize=9)
        ax.set_xticks(w.sizes, labels=[_fmt_n(n) for n in w.sizes])
        ax.set_xlabel("items (n)")
        ax.set_ylabel("peak RSS growth (MiB)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
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
