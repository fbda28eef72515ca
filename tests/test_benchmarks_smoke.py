"""Every benchmark variant still runs and still computes the right answer (no timing here).

Each variant runs once with a tiny n on a fresh asyncio loop (inside its workload's fixture: the
HTTP workloads start their real servers) and its result is compared with the workload's
reference. Variants whose library or reactive_aio API is missing are skipped with the harness's
own reason, so a benchmark written ahead of its API does not fail the suite. The harness's own
mechanics (rounds in alternating order, paired ratios, call counts, the goal table) are checked
on small synthetic variants.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from benchmarks._harness import (
    Fixture,
    Goal,
    Outcome,
    RssPoint,
    Variant,
    Workload,
    count_calls,
    measure_rss,
    measure_time,
    unavailable,
)
from benchmarks._report import (
    MARK_END,
    MARK_START,
    ModuleReport,
    Results,
    VariantInfo,
    WorkloadResult,
    render_markdown,
    render_summary,
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


def test_the_workloads_and_goals_are_discovered() -> None:
    workloads = [w for _, ws in _FOUND for w in ws]
    keys = {"W1", "W2", "W3", "W4", "W5", "W6", "W7a", "W7b", "W8", "H1", "H2", "H3"}
    assert keys <= {w.key for w in workloads}
    for workload in workloads:
        names = {v.name for v in workload.variants}
        assert len(names) == len(workload.variants), workload.key
        for goal in workload.goals:
            assert {goal.subject, goal.peer} <= names, goal.text
        for variant in workload.variants:
            assert set(variant.versus) <= names, variant.name
    goals = [g for w in workloads for g in w.goals]
    # one per row of the project's goal table (HTTP: one per framework and floor)
    assert len(goals) == 23


@pytest.fixture(scope="module")
def entered() -> Iterator[Callable[[Workload], Fixture]]:
    """The workload's fixture, entered once per run of consecutive tests of that workload (the
    HTTP servers start once per workload, and two workloads' servers never overlap)."""
    current: list[tuple[str, Fixture, contextlib.ExitStack]] = []

    def enter(workload: Workload) -> Fixture:
        if current and current[0][0] == workload.key:
            return current[0][1]
        if current:
            current.pop()[2].close()
        stack = contextlib.ExitStack()
        current.append((workload.key, stack.enter_context(workload.fixture("asyncio")), stack))
        return current[0][1]

    try:
        yield enter
    finally:
        if current:
            current.pop()[2].close()


@pytest.mark.parametrize(("module", "workload", "variant"), _CASES)
def test_variant_computes_the_reference_result(
    module: str, workload: Workload, variant: Variant, entered: Callable[[Workload], Fixture]
) -> None:
    reason = unavailable(variant.needs)
    if reason is not None:
        pytest.skip(reason)
    n = _tiny(workload)
    entered(workload)
    with asyncio.Runner(loop_factory=asyncio.new_event_loop) as runner:
        result = runner.run(variant.run(n))
        assert result == workload.expected(n)
        if variant.role != "peer":  # peers' empty-input behaviour is their own business
            assert runner.run(variant.run(0)) == workload.expected(0)


def test_http_fixture_reports_server_cpu_and_calls(
    entered: Callable[[Workload], Fixture],
) -> None:
    workload = next(w for _, ws in _FOUND for w in ws if w.key == "H1")
    variant = workload.variants[0]
    if unavailable(variant.needs) is not None:
        pytest.skip("web extra missing")
    fixture = entered(workload)
    before = fixture.cpu_seconds()
    with asyncio.Runner(loop_factory=asyncio.new_event_loop) as runner:
        calls = count_calls(runner, variant.run, 500, workload.expected(500), fixture)
        runner.run(variant.run(20_000))
    assert calls > 500  # the server's calls are counted, not only the client's
    assert fixture.cpu_seconds() > before


def test_rss_point_runs_in_a_child_process() -> None:
    module, workload = next((m, w) for m, ws in _FOUND for w in ws if w.kind == "rss")
    floor = next(v for v in workload.variants if v.role == "floor")
    outcome = measure_rss(module, workload, floor, "asyncio", sizes=(200,), time_cap_s=60)
    assert outcome.status == "ok", outcome.reason
    assert [p.n for p in outcome.points] == [200]
    assert outcome.points[0].peak_mib > 0


def _synthetic(log: list[str]) -> Workload:
    def variant(name: str, per_item_calls: int) -> Variant:
        def step(x: int) -> int:
            return x

        async def run(n: int) -> object:
            log.append(name)
            for x in range(n):
                for _ in range(per_item_calls):
                    step(x)
            return n

        return Variant(name, run, role="subject" if name == "a" else "peer")

    return Workload(
        key="T",
        name="t",
        title="t",
        metric="ns/item",
        expected=lambda n: n,
        n=200,
        quick_n=200,
        variants=(variant("a", 1), variant("b", 3)),
    )


def test_rounds_alternate_order_and_record_both_clocks() -> None:
    log: list[str] = []
    workload = _synthetic(log)
    outcomes = measure_time(
        workload, workload.variants, "asyncio", n=200, rounds=4, rep_cap_s=10, min_n=200
    )
    timed = log[2:]  # after one calibration run each
    assert timed == ["a", "b", "b", "a", "a", "b", "b", "a"]
    for outcome in outcomes:
        assert outcome.status == "ok"
        assert len(outcome.wall_s) == len(outcome.cpu_s) == 4
        assert outcome.value is not None
        assert outcome.cpu_value is not None


def test_calls_per_item_drop_the_fixed_cost() -> None:
    log: list[str] = []
    workload = _synthetic(log)
    outcomes = measure_time(
        workload,
        workload.variants,
        "asyncio",
        n=200,
        rounds=1,
        rep_cap_s=10,
        min_n=200,
        calls_n=400,
    )
    per_item = {o.variant: o.calls_per_item for o in outcomes}
    assert per_item == {"a": pytest.approx(1.0), "b": pytest.approx(3.0)}


def test_a_wrong_result_is_an_error_not_a_figure() -> None:
    async def wrong(n: int) -> object:
        return n + 1

    workload = Workload(
        key="T",
        name="t",
        title="t",
        metric="ns/item",
        expected=lambda n: n,
        variants=(Variant("w", wrong, role="subject"),),
    )
    (outcome,) = measure_time(
        workload, workload.variants, "asyncio", n=10, rounds=2, rep_cap_s=1, min_n=10
    )
    assert outcome.status == "error"
    assert "wrong result" in outcome.reason
    assert outcome.value is None


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
        variants=[
            VariantInfo("ours", "subject", "the path"),
            VariantInfo("theirs", "peer", "their path"),
        ],
        goals=[Goal("ours vs theirs", "ours", "theirs", "cost", 0.5, 0.9)],
        load={"asyncio": (0.5, 1.5)},
    )
    # theirs ran on half the n: per input it costs 2x, 4x and 3x ours in the three rounds.
    ours = Outcome("W1", "ours", "subject", "asyncio", "ok", n=1000, calls_per_item=4.5)
    ours.wall_s = ours.cpu_s = [1e-4, 1e-4, 1e-4]
    theirs = Outcome("W1", "theirs", "peer", "asyncio", "ok", n=500)
    theirs.wall_s = theirs.cpu_s = [1e-4, 2e-4, 1.5e-4]
    ours.value = ours.cpu_value = 100.0
    theirs.value = theirs.cpu_value = 300.0
    chain.outcomes = [ours, theirs]
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


def test_markdown_shows_paired_ratios_goals_and_noise() -> None:
    text = render_markdown(_results())
    times = "\N{MULTIPLICATION SIGN}"
    dash = "\N{EN DASH}"
    assert "| **ours** | 100 | 100 | 4.5 |" in text
    assert "| theirs | 300† | 300 | — |" in text
    assert f"| theirs | 3.0{times} (2.0{dash}4.0{times}) |" in text
    assert (
        f"| ours vs theirs | W1 | cost ≤ 0.50{times} | 0.90{times} | "
        f"0.33{times} (0.25{dash}0.50{times}) | yes |"
    ) in text
    assert "| W1 | asyncio | 0.5 → 1.5 | 1.00 | 33% | 67% |" in text
    assert "- theirs: their path" in text
    assert "| theirs | 8.0 | — | 8.0" in text
    assert "| events_per_s | 12,346 |" in text


def test_the_readme_summary_is_the_goal_table_without_the_workload_tables() -> None:
    text = render_summary(_results())
    assert "Quick run (small n)." in text
    assert "| ours vs theirs | W1 | cost ≤ 0.50" in text
    full = render_markdown(_results())
    assert "| **ours** | 100 | 100 | 4.5 |" in full
    assert "| **ours** |" not in text
    assert "| W1 | asyncio | 0.5 → 1.5" not in text


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


def test_code_lines_count_code_only() -> None:
    from benchmarks.code_lines import code_lines

    source = '''"""Module docstring,
over two lines."""

import os  # a comment


def f(x: int) -> int:
    """Docstring."""
    # a comment
    text = """not a docstring:
    an assigned string"""
    return x + len(text)
'''
    assert code_lines(source) == 5  # import, def, the two lines of text, return
