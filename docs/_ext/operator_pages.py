"""Generate one docs page per operator family from the code itself.

Families are the ``# -- operators: … --`` / ``# -- sources: … --`` sections of
``reactive_aio/_flux.py``; each entry shows the method's signature and docstring, the
``Backpressure:`` and ``Errors:`` lines of its module (``_operators/_<name>.py`` or
``_sources/_<name>.py``) and a marble diagram recorded from a real run (see
``marble_examples``). Nothing is written by hand, so a page cannot drift from the code.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "reactive_aio"
_SECTION = re.compile(
    r"^\s*# -- (sources|operators|consuming|subscribing|composing)(?:: (.+?))? -+\s*$"
)


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def families() -> list[tuple[str, list[ast.FunctionDef]]]:
    """The sections of the Flux class in order, each with its public methods."""
    source = (PACKAGE / "_flux.py").read_text(encoding="utf-8")
    lines = source.splitlines()
    tree = ast.parse(source)
    flux = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Flux")
    sections: list[tuple[int, str]] = []
    for number, line in enumerate(lines, start=1):
        match = _SECTION.match(line)
        if match:
            kind, detail = match.groups()
            sections.append(
                (number, f"{kind.capitalize()}: {detail}" if detail else kind.capitalize())
            )
    grouped: dict[str, list[ast.FunctionDef]] = {title: [] for _, title in sections}
    for node in flux.body:
        if not isinstance(node, ast.FunctionDef) or node.name.startswith("_"):
            continue
        if any(isinstance(d, ast.Name) and d.id == "overload" for d in node.decorator_list):
            continue
        owner = [title for line, title in sections if line < node.lineno]
        if owner and not owner[-1].startswith(("Consuming", "Subscribing", "Composing")):
            grouped[owner[-1]].append(node)
    return [(title, methods) for title, methods in grouped.items() if methods]


def _module_of(name: str) -> Path | None:
    """The module of operator *name*: ``_<name>.py``, or the one whose summary names it (a
    module that serves several methods, such as ``_peek.py`` for the ``do_on_*`` family)."""
    for folder in ("_operators", "_sources", "_processors"):
        path = PACKAGE / folder / f"_{name}.py"
        if path.exists():
            return path
    for path in sorted((PACKAGE / "_operators").glob("_*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        if f"``{name}``" in doc.split("\n\n")[0]:
            return path
    return None


def _module_notes(name: str) -> dict[str, str]:
    path = _module_of(name)
    if path is None:
        return {}
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    notes: dict[str, str] = {}
    for key in ("Backpressure", "Errors", "Loop"):
        match = re.search(rf"^{key}:(.*?)(?=^\w+:|\Z)", doc, re.S | re.M)
        if match:
            notes[key] = " ".join(match.group(1).split())
    return notes


def _signature(node: ast.FunctionDef) -> str:
    args = ast.unparse(node.args)
    args = re.sub(r"^self,?\s*", "", args)
    return f"{node.name}({args})"


def render_family(title: str, methods: list[ast.FunctionDef], marbles: dict[str, list[str]]) -> str:
    lines = [f"# {title}", ""]
    lines += ["| operator | what it does |", "| --- | --- |"]
    for node in methods:
        summary = (ast.get_docstring(node) or "").split("\n")[0]
        lines.append(f"| [`{node.name}`](#{_slug(node.name)}) | {summary} |")
    lines.append("")
    for node in methods:
        lines += [f"## {node.name}", "", "```python", f"Flux.{_signature(node)}", "```", ""]
        lines += [ast.get_docstring(node) or "", ""]
        for path in marbles.get(node.name, ()):
            lines += [f"![{node.name} marble diagram]({path})", ""]
        for key, text in _module_notes(node.name).items():
            lines += [f"**{key}:** {text}", ""]
    return "\n".join(lines)


def write_pages(srcdir: Path, marbles: dict[str, list[str]] | None = None) -> list[str]:
    """Write ``operators/<family>.md`` pages and the family index; return the page names."""
    out = srcdir / "operators"
    out.mkdir(exist_ok=True)
    names = []
    for title, methods in families():
        name = _slug(title)
        text = render_family(title, methods, marbles or {})
        target = out / f"{name}.md"
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
        names.append(name)
    index = ["# Operators", "", "```{toctree}", ":maxdepth: 1", "", *names, "```", ""]
    (out / "index.md").write_text("\n".join(index), encoding="utf-8")
    return names


def _builder_inited(app: Any) -> None:
    from marble_examples import call_texts, record_all
    from sphinx.util import logging

    marbles = record_all(Path(app.srcdir) / "_static" / "marbles")
    write_pages(Path(app.srcdir), marbles)
    documented = {node.name for _, methods in families() for node in methods}
    log = logging.getLogger(__name__)
    for name in sorted(documented - set(marbles)):  # -W: a failed build
        log.warning("operator %r has no marble example", name)
    for key, text in call_texts().items():
        name = key.partition("/")[0]
        if f"{name}(" not in text:
            log.warning("the marble example of %r does not call it: %s", name, text)


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", _builder_inited)
    return {"parallel_read_safe": True}
