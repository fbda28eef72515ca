"""One public home per name, documented operators, and no upward imports between layers."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path
from types import ModuleType

import pytest

import reactive_aio
import reactive_aio.spark
from tests.imports import imported_after

PACKAGE = Path(reactive_aio.__file__).parent
LAYERS = ["_core", ("_sources", "_operators", "_sinks", "_processors"), "_flux"]


def _isort_key(name: str) -> tuple[int, str]:
    # ruff's RUF022 order: CONSTANTS, then Classes, then everything else
    if name.isupper():
        return (0, name)
    return (1, name) if name[:1].isupper() else (2, name)


def test_all_is_a_sorted_tuple_of_existing_names() -> None:
    assert isinstance(reactive_aio.__all__, tuple)
    assert list(reactive_aio.__all__) == sorted(reactive_aio.__all__, key=_isort_key)
    for name in reactive_aio.__all__:
        assert hasattr(reactive_aio, name), name


def test_a_part_is_imported_when_one_of_its_names_is_first_read() -> None:
    parts = ("reactive_aio._core", "reactive_aio._flux", "reactive_aio.spark._sink")
    assert imported_after("import reactive_aio, reactive_aio.spark", parts) == []
    assert imported_after("import reactive_aio\nreactive_aio.Flux", parts) == list(parts[:2])


@pytest.mark.parametrize("package", [reactive_aio, reactive_aio.spark], ids=lambda p: p.__name__)
def test_the_lazy_homes_are_the_imports_type_checkers_read(package: ModuleType) -> None:
    tree = ast.parse(Path(package.__file__ or "").read_text(encoding="utf-8"))
    (block,) = (
        node
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    )
    imported: dict[str, tuple[str, ...]] = {}
    for statement in block.body:
        assert isinstance(statement, ast.ImportFrom), ast.unparse(statement)
        home = "." * statement.level + (statement.module or "")
        imported[home] = tuple(alias.asname or alias.name for alias in statement.names)
    assert imported == package._HOMES
    assert sorted(name for names in imported.values() for name in names) == sorted(package.__all__)


def test_the_namespace_lists_every_public_name_and_refuses_others() -> None:
    assert set(reactive_aio.__all__) <= set(dir(reactive_aio))
    with pytest.raises(AttributeError, match="module 'reactive_aio' has no attribute 'Fluxx'"):
        reactive_aio.Fluxx  # type: ignore[attr-defined]  # noqa: B018


def test_public_classes_live_at_the_top_level() -> None:
    for name in reactive_aio.__all__:
        obj = getattr(reactive_aio, name)
        if isinstance(obj, type):
            assert obj.__module__ == "reactive_aio", f"{name} shows {obj.__module__}"


def _modules(folder: str) -> list[Path]:
    return sorted(p for p in (PACKAGE / folder).glob("_*.py") if p.name != "__init__.py")


@pytest.mark.parametrize("path", _modules("_operators"), ids=lambda p: p.stem)
def test_every_operator_module_states_backpressure_and_errors(path: Path) -> None:
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    assert "Backpressure:" in doc, f"{path.name} has no Backpressure: line"
    assert "Errors:" in doc, f"{path.name} has no Errors: line"


def _relative_imports(path: Path, source: str | None = None) -> set[str]:
    """The top-level parts of the package that *path* (or *source* placed there) imports."""
    tree = ast.parse(path.read_text(encoding="utf-8") if source is None else source)
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level >= 1:
            depth = len(path.relative_to(PACKAGE).parts) - 1
            if node.level > depth:  # reaches the package root: name the top-level module
                if node.module:
                    found.add(node.module.split(".")[0])
                else:  # ``from .. import _operators``
                    found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("reactive_aio."):
            found.add(node.module.split(".")[1])  # type: ignore[union-attr]
    return found


@pytest.mark.parametrize("folder", ["_sources", "_operators", "_sinks", "_processors"])
def test_parts_import_only_the_core_and_their_own_layer(folder: str) -> None:
    allowed = {"_core", "_sources", "_operators", "_sinks", "_processors"}
    for path in sorted((PACKAGE / folder).glob("*.py")):
        imported = _relative_imports(path)
        assert imported <= allowed, f"{folder}/{path.name} imports {imported - allowed}"


def test_the_layer_check_sees_a_source_importing_an_operator() -> None:
    probe = PACKAGE / "_sources" / "_probe.py"
    spellings = ("from .._operators._map import map_publisher", "from .. import _operators")
    for line in (*spellings, "from reactive_aio._operators._map import map_publisher"):
        assert "_operators" in _relative_imports(probe, line), line


def test_every_public_submodule_imports() -> None:
    for info in pkgutil.iter_modules([str(PACKAGE)]):
        if info.name.startswith("_") or info.name in {"spark", "adapters"}:
            continue  # optional extras are covered by their own tests
        importlib.import_module(f"reactive_aio.{info.name}")


def _private_core_imports(path: Path, source: str | None = None) -> list[str]:
    """The private ``_core._x`` modules that *path* (or *source* placed there) imports."""
    tree = ast.parse(path.read_text(encoding="utf-8") if source is None else source)
    package = path.relative_to(PACKAGE.parent).parts[:-1]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # resolve against the module's own package
                parent = package[: len(package) - node.level + 1]
                base = ".".join((*parent, *base.split("."))).strip(".")
            modules = [base]
            if base == "reactive_aio._core":  # ``from reactive_aio._core import _x``
                modules = [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        found += [m for m in modules if m.startswith("reactive_aio._core._")]
    return found


def test_private_core_modules_are_imported_only_by_core_and_lowlevel() -> None:
    # Operator authors (and the rest of the package) reach the kit through the _core package or
    # reactive_aio.lowlevel, never through one of _core's private modules.
    root = PACKAGE.parent
    offenders = {
        str(path.relative_to(root)): imported
        for folder in (
            PACKAGE,
            root / "app",
            root / "tests",
            root / "benchmarks",
            root / "examples",
        )
        for path in sorted(folder.rglob("*.py"))
        if path.parent != PACKAGE / "_core" and path != PACKAGE / "lowlevel.py"
        if (imported := _private_core_imports(path))
    }
    assert not offenders


@pytest.mark.parametrize(
    "line",
    [
        "from .._core._drain import DrainSubscription",
        "from reactive_aio._core._drain import DrainSubscription",
        "from reactive_aio._core import _drain",
        "from .._core import _drain",
        "from . import _drain",
        "import reactive_aio._core._drain",
    ],
)
def test_the_import_check_sees_every_spelling(line: str) -> None:
    inside_core = PACKAGE / "_core" / "_probe.py"
    inside_operators = PACKAGE / "_operators" / "_probe.py"
    where = inside_core if line == "from . import _drain" else inside_operators
    assert _private_core_imports(where, line) == ["reactive_aio._core._drain"]


@pytest.mark.parametrize(
    "line",
    ["from .._core import DrainSubscription", "from reactive_aio.lowlevel import QueueDrain"],
)
def test_the_import_check_lets_public_doors_pass(line: str) -> None:
    assert not _private_core_imports(PACKAGE / "_operators" / "_probe.py", line)


def test_lowlevel_is_the_home_of_the_kit() -> None:
    from reactive_aio import lowlevel

    assert list(lowlevel.__all__) == sorted(lowlevel.__all__, key=_isort_key)
    for name in lowlevel.__all__:
        obj = getattr(lowlevel, name)
        assert name not in reactive_aio.__all__, f"{name} has two public homes"
        if isinstance(obj, type):
            assert obj.__module__ == "reactive_aio.lowlevel", f"{name} shows {obj.__module__}"


# The engine room: names _core shares with the other layers of the package that no author of a
# stage needs (each has a public way in). Keep this short: a name an outside source or
# operator would need goes to reactive_aio.lowlevel instead.
CORE_INTERNAL = {
    # debug switches behind Flux.checked and reactive_aio.testing.checked / debug_violations
    "DEBUG",
    "DEBUG_CHECKER",
    "CheckedPublisher",
    "assembly_site",
    # assembly traces: where Flux operators were called, noted on errors by checkpoint
    "Assembly",
    "note_checkpoint",
    "note_stage",
    # synchronous fusion: the sources and operators that take part, the Flux terminals that
    # fold over them and the pull buffer behind async for, which pulls a source at hand;
    # an author's stage is fused through SyncSource / fuse_boundary instead
    "FusableSource",
    "FusedPublisher",
    "FusedSubscriber",
    "IteratorSubscription",
    "PulledSubscription",
    "SyncOwner",
    "exact_length",
    "fold_at_hand",
    "items_at_hand",
    # ... and Flux.subscribe pulling a source at hand into an ItemsSubscriber (an author's
    # sink subclasses ItemsSubscriber; the subscribing is Flux's)
    "subscribe_pulled",
    # ... and the stages fusion sees through (name, tag), which only label the stream
    "Transparent",
    # ... and for sources that await: the subscription serving a subscriber from one task, the
    # reader's own loop behind async for, and closing the source's iterator
    "AwaitingSubscription",
    "close_async_iterator",
    "iterate_awaiting",
    "fuse",
    # ... and map_async's calls, one at a time over a source at hand, awaited in such a loop
    "AwaitedCalls",
    "AwaitingSource",
    "null_result_error",
    "serve_calls",
    # the lockstep drain behind the processors (MulticastProcessor and the replaying ones)
    "LockstepDrain",
    # loop-boundary plumbing: the collecting sinks subscribe through a boundary of their own;
    # an author goes through adopt
    "LoopBoundary",
    # our operators' own configurations of the four emission mechanisms (flat_map's outer
    # source, the sized and timed groups, the overflow policy's buffer): kept behind their
    # mechanism so that the author menu stays at four
    "OuterDrain",
    "OverflowDrain",
    "OverflowSubscriber",
    "SizedTimedOperator",
    # the values of Overflow.then, which users spell as strings
    "OverflowThen",
    # the arbiter's count of synchronous switches before it gives the loop a turn (a tuning
    # constant), and the one-line stop of a Companion that may not have started
    "SYNC_SWITCHES",
    "stop_companion",
    # the library's logger; everybody else gets it as logging.getLogger("reactive_aio")
    "logger",
}


def _core_names() -> set[str]:
    """The public-looking names _core exposes: everything but its private modules and dunders
    (and the helpers pytest's assertion rewriting adds, which are no identifiers)."""
    from reactive_aio import _core

    return {name for name in dir(_core) if name.isidentifier() and not name.startswith("_")}


def test_every_core_name_has_exactly_one_public_home() -> None:
    # trio's rule: each name of _core.__all__ is re-exported by exactly one public module.
    from reactive_aio import _core, lowlevel, testing

    assert list(_core.__all__) == sorted(_core.__all__, key=_isort_key)
    for name in _core.__all__:
        homes = [
            module.__name__
            for module in (reactive_aio, lowlevel, testing)
            if name in module.__all__ and getattr(module, name) is getattr(_core, name)
        ]
        assert len(homes) == 1, f"_core.{name} is re-exported by {homes}"


def test_every_other_core_name_is_listed_as_internal() -> None:
    from reactive_aio import _core

    public = set(_core.__all__)
    assert not public & CORE_INTERNAL, "a name is both public and internal"
    assert _core_names() - public == CORE_INTERNAL


def test_no_public_module_re_exports_an_internal_core_name() -> None:
    from reactive_aio import _core, lowlevel, testing

    for module in (reactive_aio, lowlevel, testing):
        for name in module.__all__:
            assert not any(
                getattr(module, name) is getattr(_core, internal) for internal in CORE_INTERNAL
            ), f"{module.__name__}.{name} is an internal _core name"


def test_lowlevel_offers_four_emission_bases() -> None:
    # An emission base is a class an author subclasses to emit items to a subscriber: the
    # drain, the buffer, the queue and the arbiter; the one-to-one subscriber bases
    # (OperatorSubscriber, DroppingSubscriber) pass items on and are not counted.
    from reactive_aio import lowlevel
    from reactive_aio.lowlevel import ArbiterSubscriber, DrainSubscription

    offered = {
        name
        for name in lowlevel.__all__
        if isinstance(obj := getattr(lowlevel, name), type)
        and issubclass(obj, (DrainSubscription, ArbiterSubscriber))
    }
    assert offered == {"ArbiterSubscriber", "BufferDrain", "DrainSubscription", "QueueDrain"}
