"""Every benchmark variant still runs and still computes the right answer (no timing here).

Each variant runs once with a tiny n on a fresh asyncio loop and its result is compared with the
workload's reference. Variants whose library or reactive_aio API is missing are skipped with the
harness's own reason, so a benchmark written ahead of its API does not fail the suite.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from benchmarks._harness import Outcome, RssPoint, Variant, Workload, measure_rss, unavailable
from benchmarks._report import (
    MARK_END,
    MARK_START,
    ModuleReport,
    Results,
    VariantInfo,
    WorkloadResult,
    render_markdown,
    update_readme,
)
from benchmarks.run import discover

_FOUND = discover().workloads
_CASES = [
    pytest.param(module, workload, variant, id=f"{workload.key}-{variant.name}")
    for module, workloads in _FOUND
    for workload in workloads
    for variant in workload.variants
]
_TINY = 300


def _tiny(workload: Workload) -> int:
    return min(_TINY, workload.quick_n, *(workload.quick_sizes or (_TINY,)))


def test_the_five_workloads_are_discovered() -> None:
    keys = {w.key for _, workloads in _FOUND for w in workloads}
    assert {"W1", "W2", "W3", "W4", "W5"} <= keys


@pytest.mark.parametrize(("module", "workload", "variant"), _CASES)
def test_variant_computes_the_reference_result(
    module: str, workload: Workload, variant: Variant
) -> None:
    reason = unavailable(variant.needs)
    if reason is not None:
        pytest.skip(reason)
    n = _tiny(workload)
    with asyncio.Runner(loop_factory=asyncio.new_event_loop) as runner:
        result = runner.run(variant.run(n))
        assert result == workload.expected(n)
        if variant.role != "peer":  # peers' empty-input behaviour is their own business
            assert runner.run(variant.run(0)) == workload.expected(0)


def test_rss_point_runs_in_a_child_process() -> None:
    module, workload = next((m, w) for m, ws in _FOUND for w in ws if w.kind == "rss")
    floor = next(v for v in workload.variants if v.role == "floor")
    outcome = measure_rss(module, workload, floor, "asyncio", sizes=(200,), time_cap_s=60)
    assert outcome.status == "ok", outcome.reason
    assert [p.n for p in outcome.points] == [200]
    assert outcome.points[0].peak_mib > 0


def _results() -> Results:
    chain = WorkloadResult(
        key="W1",
        name="chain",
        title="t",
        description="d.",
        metric="ns/item",
        kind="time",
        module="benchmarks.bench_chain",
        n=1000,
        sizes=[],
        reference="ours",
        variants=[VariantInfo("ours", "subject", ""), VariantInfo("theirs", "peer", "")],
    )
    chain.outcomes = [
        Outcome("W1", "ours", "subject", "asyncio", "ok", n=1000, value=100.0),
        Outcome("W1", "theirs", "peer", "asyncio", "ok", n=500, value=450.0),
    ]
    memory = WorkloadResult(
        key="W3",
        name="backpressure",
        title="t",
        description="d.",
        metric="MiB",
        kind="rss",
        module="benchmarks.bench_backpressure",
        n=0,
        sizes=[10, 20],
        reference="ours",
        variants=[VariantInfo("ours", "subject", ""), VariantInfo("theirs", "peer", "")],
    )
    memory.outcomes = [
        Outcome("W3", "ours", "subject", "asyncio", "ok", points=[RssPoint(10, 20.0, 20.5)]),
        Outcome("W3", "theirs", "peer", "asyncio", "ok", points=[RssPoint(10, 20.0, 28.0)]),
    ]
    sse = ModuleReport("benchmarks.bench_x", {"events_per_s": 12345.6, "ratio": 1.2345})
    return Results(meta={"quick": True}, workloads=[chain, memory], reports=[sse])


def test_markdown_shows_ratios_against_each_peer() -> None:
    text = render_markdown(_results())
    assert "| theirs | 450† | 4.5\N{MULTIPLICATION SIGN} |" in text
    assert "| theirs | 8.0 | — | 8.0\N{MULTIPLICATION SIGN} |" in text
    assert "| events_per_s | 12,346 |" in text
    assert "| ratio | 1.23 |" in text


def test_results_survive_a_json_round_trip() -> None:
    results = _results()
    again = Results.from_json(results.to_json())
    assert render_markdown(again) == render_markdown(results)


def test_update_readme_replaces_only_the_marked_section(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{MARK_START}\nold table\n{MARK_END}\noutro\n", encoding="utf-8")
    update_readme(readme, "new table\n")
    assert readme.read_text(encoding="utf-8") == (
        f"intro\n{MARK_START}\nnew table\n{MARK_END}\noutro\n"
    )
    readme.write_text("no markers\n", encoding="utf-8")
    with pytest.raises(ValueError, match="bench:start"):
        update_readme(readme, "x")
