"""The README's promises stay true."""

from __future__ import annotations

from pathlib import Path

from reactive_aio import MAX_DEMAND, BehaviorProcessor, Flux, ReplayProcessor, Subscription

README = Path(__file__).resolve().parents[1] / "README.md"


class _Upstream(Subscription):
    def __init__(self) -> None:
        self.requested = 0

    def request(self, n: int) -> None:
        self.requested += n

    def cancel(self) -> None:
        pass


def test_the_readme_names_the_stages_whose_memory_demand_does_not_bound() -> None:
    # "every buffer is bounded by what was requested" holds except for the stages that ask
    # upstream for everything and keep history; the README must name each with its bound.
    for processor in (ReplayProcessor[int](), BehaviorProcessor[int]()):
        upstream = _Upstream()
        processor.on_subscribe(upstream)
        assert upstream.requested == MAX_DEMAND
    assert "replay" in dir(Flux)
    text = " ".join(README.read_text(encoding="utf-8").split())
    assert "every buffer is bounded by what was requested" in text
    exceptions = text[text.index("keep history by design") :][:600]
    for name in ("`ReplayProcessor`", "`Flux.replay()`", "`BehaviorProcessor`"):
        assert name in exceptions
    for bound in ("`size`", "`history`", "`ttl`", "the latest item", "falls behind"):
        assert bound in exceptions


def test_the_readme_stays_short_and_says_how_to_run_commands_after_set_up() -> None:
    # The per-workload benchmark tables live in docs/benchmarks.md; the README keeps the goals.
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    assert "scripts/pipeline" in text
    assert "scripts/test" in text
    assert ". .venv/bin/activate" in text
    assert ".venv/bin/reactive-aio" in text
    assert "(docs/benchmarks.md)" in text


def test_the_readme_operator_count_is_true() -> None:
    """ "~N operators": every public `Flux` method but the plumbing (subscribe, pipe, iterate and
    the synchronous-source hooks) counts: sources, operators and awaitable terminals."""
    plumbing = {"subscribe", "pipe", "iterate", "sync_iterator", "sync_inner", "fused_chain"}
    count = sum(1 for name in dir(Flux) if name[0] != "_" and name not in plumbing)
    claimed = int(
        README.read_text(encoding="utf-8").split(" operators that obey")[0].split("~")[-1]
    )
    assert abs(count - claimed) < 5, f"README says ~{claimed} operators, Flux has {count}"
