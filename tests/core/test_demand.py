"""Demand arithmetic lives in `_core/_demand.py`: the window helper, and a rule that keeps
saturation and re-request policies there."""

from __future__ import annotations

import re
from pathlib import Path

import attrs

import reactive_aio
from reactive_aio import MAX_DEMAND
from reactive_aio.lowlevel import DemandWindow, replenish_threshold

PACKAGE = Path(reactive_aio.__file__).parent


@attrs.define
class _Upstream:
    """A subscription that records requests and, like a synchronous source, may deliver
    inside ``request``."""

    window: DemandWindow | None = None
    requests: list[int] = attrs.Factory(list)
    deliver_inside: bool = False

    def request(self, n: int) -> None:
        self.requests.append(n)
        if self.deliver_inside and self.window is not None:
            self.window.received(n)

    def cancel(self) -> None:
        pass


def test_window_asks_for_what_is_missing_up_to_the_target() -> None:
    upstream = _Upstream()
    window = DemandWindow(upstream)
    assert window.top_up(10) == 10
    window.received(3)
    assert window.asked == 7
    assert window.top_up(10) == 3  # back to 10 asked and not received
    assert window.top_up(4) == 0  # a target below what is asked asks nothing
    assert upstream.requests == [10, 3]


def test_window_waits_for_a_batch() -> None:
    upstream = _Upstream()
    window = DemandWindow(upstream)
    window.top_up(8)
    window.received(2)
    assert window.top_up(8, batch=4) == 0  # 2 missing: less than a batch
    window.received(2)
    assert window.top_up(8, batch=4) == 4
    assert upstream.requests == [8, 4]


def test_window_counts_a_delivery_made_inside_its_request() -> None:
    upstream = _Upstream(deliver_inside=True)
    window = DemandWindow(upstream)
    upstream.window = window
    window.top_up(5)
    assert window.asked == 0  # the items arrived inside the request: nothing is outstanding
    assert window.top_up(5) == 5


def test_window_without_upstream_asks_nothing() -> None:
    window = DemandWindow()
    assert window.top_up(5) == 0
    assert window.asked == 0


def test_one_replenish_policy() -> None:
    assert replenish_threshold(256) == 192
    assert replenish_threshold(1) == 1
    assert replenish_threshold(MAX_DEMAND) == 0


# -- rules ---------------------------------------------------------------------------------------

_SATURATION = re.compile(r"MAX_DEMAND\s+if\s+\w+\s*>=|[!<]=?\s*MAX_DEMAND\b")
"""Inline demand arithmetic: a saturating sum (``MAX_DEMAND if total >= MAX_DEMAND``) or an
emission counted against bounded demand (``!= MAX_DEMAND``, ``< MAX_DEMAND``)."""

_HALVES = re.compile(r">>\s*1\b|//\s*2\b")
"""A replenish batch of half a window, beside the library's three quarters."""

_ALLOWED = {
    # The per-request and per-item paths, where a call costs a measurable share (benchmarked):
    # each site says so where it stands.
    "_core/_drain.py": 3,
    "_core/_arbiter.py": 1,
    "_core/_lockstep.py": 1,
    # Checks that demand is unbounded, not arithmetic on it.
    "_core/_protocol_check.py": 1,
    "_operators/_flat_map.py": 1,
}


def _library_modules() -> list[Path]:
    skip = ("tck", "testing")  # the test kits probe the arithmetic from outside
    return [
        path
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.relative_to(PACKAGE).parts[0] not in skip and path.name != "_demand.py"
    ]


def _hits(pattern: re.Pattern[str], path: Path) -> int:
    lines = path.read_text(encoding="utf-8").splitlines()
    return sum(1 for line in lines if pattern.search(line.split("#", 1)[0]))


def test_demand_saturation_lives_in_the_demand_module() -> None:
    found = {
        str(path.relative_to(PACKAGE)): count
        for path in _library_modules()
        if (count := _hits(_SATURATION, path))
    }
    unexpected = {name: n for name, n in found.items() if n > _ALLOWED.get(name, 0)}
    assert not unexpected, f"demand arithmetic outside _core/_demand.py: {unexpected}"


def test_no_second_replenish_policy() -> None:
    found = [
        name
        for path in _library_modules()
        if "replenish" in path.read_text(encoding="utf-8")
        and _hits(_HALVES, path)
        and (name := str(path.relative_to(PACKAGE)))
    ]
    assert not found, f"a replenish batch of half a window: {found}"


def test_the_rule_sees_what_it_forbids(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "total = a + n\nx = MAX_DEMAND if total >= MAX_DEMAND else total\n"
        "if requested != MAX_DEMAND:  # produced\n    pass\n"
        "# MAX_DEMAND if only in a comment\n"
    )
    assert _hits(_SATURATION, module) == 2
