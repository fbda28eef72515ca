"""Rules on the package's static import graph: no import cycle anywhere, the sources never
import the operators, and the core imports nothing from outside itself.

The graph counts every import a module holds, wherever it stands: at module level, inside a
function and under ``if TYPE_CHECKING:``. Each is a dependency a reader has to follow, and one
that runs late or only for the type checker still ties the two modules together.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Mapping, Set as AbstractSet
from pathlib import Path

import pytest

import reactive_aio

PACKAGE = Path(reactive_aio.__file__).parent

Graph = Mapping[str, AbstractSet[str]]


def _module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path) -> dict[str, set[str]]:
    """Each module of the package at *root* -> the modules of that package it imports."""
    paths = {_module_name(path, root): path for path in sorted(root.rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for module, path in paths.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        imported: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: against the package, one level up per extra dot
                    parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parent, base] if base else parent)
                # ``from pkg import name`` imports the submodule pkg.name if there is one
                imported.update(
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in paths else base
                    for alias in node.names
                )
        graph[module] = {name for name in imported if name in paths and name != module}
    return graph


@functools.cache
def _package_graph() -> Graph:
    return import_graph(PACKAGE)  # parsed once for the tests below


def import_cycles(graph: Graph) -> list[list[str]]:
    """One cycle (``[a, b, …, a]``) through each group of modules that import one another."""
    cycles: list[list[str]] = []
    done: set[str] = set()
    for start in sorted(graph):
        if start in done:
            continue
        # Breadth-first from start: the first way back to start is a shortest cycle through it.
        came_from: dict[str, str] = {}
        frontier = [start]
        while frontier and start not in came_from:
            following = []
            for module in frontier:
                for target in sorted(graph[module]):
                    if target not in came_from:
                        came_from[target] = module
                        following.append(target)
            frontier = following
        if start in came_from:
            cycle = [start]
            while len(cycle) == 1 or cycle[-1] != start:
                cycle.append(came_from[cycle[-1]])
            cycle.reverse()
            cycles.append(cycle)
            done.update(cycle)
    return cycles


def _describe(cycles: list[list[str]]) -> str:
    return "; ".join(" -> ".join(cycle) for cycle in cycles)


def _under(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_the_package_has_no_import_cycle() -> None:
    cycles = import_cycles(_package_graph())
    assert not cycles, f"import cycles: {_describe(cycles)}"


def test_the_application_has_no_import_cycle() -> None:
    import reactive_aio_app

    cycles = import_cycles(import_graph(Path(reactive_aio_app.__file__).parent))
    assert not cycles, f"import cycles: {_describe(cycles)}"


def test_the_sources_never_import_the_operators() -> None:
    graph = _package_graph()
    upward = sorted(
        (module, target)
        for module, targets in graph.items()
        if _under(module, "reactive_aio._sources")
        for target in targets
        if _under(target, "reactive_aio._operators")
    )
    assert not upward


def test_the_core_imports_nothing_from_outside_the_core() -> None:
    outside = sorted(
        (module, target)
        for module, targets in _package_graph().items()
        if _under(module, "reactive_aio._core")
        for target in targets
        if not _under(target, "reactive_aio._core")
    )
    assert not outside


# -- the parser itself ---------------------------------------------------------------------


def _write(root: Path, files: Mapping[str, str]) -> Path:
    for name, source in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
    return root / "pkg"


def test_a_cycle_through_a_function_and_type_checking_import_is_reported(tmp_path: Path) -> None:
    package = _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "def late():\n    from .sub import b\n",
            "pkg/sub/__init__.py": "",
            "pkg/sub/b.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..c import C\n"
            ),
            "pkg/c.py": "import pkg.a\nimport os\n",
            "pkg/d.py": "from . import c\n",  # reaches the cycle but is not on it
        },
    )
    graph = import_graph(package)
    assert graph == {
        "pkg": set(),
        "pkg.a": {"pkg.sub.b"},
        "pkg.c": {"pkg.a"},
        "pkg.d": {"pkg.c"},
        "pkg.sub": set(),
        "pkg.sub.b": {"pkg.c"},
    }
    assert _describe(import_cycles(graph)) == "pkg.a -> pkg.sub.b -> pkg.c -> pkg.a"


@pytest.mark.parametrize(
    ("line", "target"),
    [
        ("from . import b", "pkg.b"),  # a submodule
        ("from . import name", "pkg"),  # a name of the package itself
        ("from .b import name", "pkg.b"),
        ("from pkg.b import name", "pkg.b"),
        ("import pkg.b", "pkg.b"),
        ("import pkg.b as alias", "pkg.b"),
    ],
)
def test_every_import_spelling_finds_its_module(tmp_path: Path, line: str, target: str) -> None:
    package = _write(tmp_path, {"pkg/__init__.py": "", "pkg/a.py": line, "pkg/b.py": ""})
    assert import_graph(package)["pkg.a"] == {target}
