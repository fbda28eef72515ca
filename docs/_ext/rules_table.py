"""Generate the spec-rule table: rule -> where it is implemented -> which tests check it.

Runs at build time over the source and test trees, so the table can never disagree with the
code: a rule is "implemented" where a module names it (``rule 3.9``) and "checked" by every
test whose name carries it (``test_rule_3_9_…``, ``…spec309…``) or whose body names it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

RULES = (
    [f"1.{i}" for i in range(1, 12)]
    + [f"2.{i}" for i in range(1, 14)]
    + [f"3.{i}" for i in range(1, 18)]
    + ["4.1", "4.2"]
)

_MENTION = re.compile(r"(?:rules?|§)\s*((?:\d\.\d{1,2}(?:\s*,\s*|\s*/\s*|\s+and\s+)?)+)", re.I)
_RULE_ID = re.compile(r"(\d)\.(\d{1,2})")
_TEST_DEF = re.compile(r"^\s*(?:async\s+)?def\s+(test_\w+)", re.MULTILINE)
_RULE_NAME = re.compile(r"rule_(\d)_(\d{1,2})(?:_|$)")
_SPEC_NAME = re.compile(r"spec(\d)(\d\d)(?:_|$)")


def _mentions(text: str) -> set[str]:
    """Rules named in prose: ``rule 3.9``, ``rules 1.5, 1.6 and 1.7``, ``§3.3``."""
    return {f"{a}.{int(b)}" for group in _MENTION.findall(text) for a, b in _RULE_ID.findall(group)}


def _rules_in_name(name: str) -> set[str]:
    if name.startswith("test_untested_"):  # a placeholder that always skips checks nothing
        return set()
    found = {f"{a}.{int(b)}" for a, b in _RULE_NAME.findall(name)}
    found |= {f"{a}.{int(b)}" for a, b in _SPEC_NAME.findall(name)}
    return found


def collect() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Map each rule to the modules that implement it and the tests that check it."""
    implemented: dict[str, set[str]] = {rule: set() for rule in RULES}
    checked: dict[str, set[str]] = {rule: set() for rule in RULES}
    for path in sorted((ROOT / "reactive_aio").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for rule in _mentions(text):
            if rule in implemented and not module.startswith("reactive_aio.tck"):
                implemented[rule].add(module)
            if rule in checked and module.startswith("reactive_aio.tck"):
                checked[rule].add(module)
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        text = path.read_text(encoding="utf-8")
        relative = path.relative_to(ROOT).as_posix()
        for match in _TEST_DEF.finditer(text):
            for rule in _rules_in_name(match.group(1)):
                if rule in checked:
                    checked[rule].add(f"{relative}::{match.group(1)}")
    for path in sorted((ROOT / "reactive_aio" / "tck").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for match in _TEST_DEF.finditer(text):
            for rule in _rules_in_name(match.group(1)):
                if rule in checked:
                    checked[rule].add(f"reactive_aio.tck::{match.group(1)}")
    return implemented, checked


def render() -> str:
    """The table as MyST Markdown."""
    implemented, checked = collect()
    lines = [
        "| rule | implemented in | checked by |",
        "| --- | --- | --- |",
    ]
    for rule in RULES:
        where = (
            ", ".join(f"`{m}`" for m in sorted(implemented[rule])) or "(follows from the design)"
        )
        tests = sorted(checked[rule])
        shown = ", ".join(f"`{t}`" for t in tests[:6])
        if len(tests) > 6:
            shown += f" and {len(tests) - 6} more"
        lines.append(f"| {rule} | {where} | {shown or '—'} |")
    return "\n".join(lines) + "\n"


def _write(app: Any) -> None:
    target = Path(app.srcdir) / "reference" / "_rules_table.md"
    text = render()
    if not target.exists() or target.read_text(encoding="utf-8") != text:
        target.write_text(text, encoding="utf-8")


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", _write)
    return {"parallel_read_safe": True}
