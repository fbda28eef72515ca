"""The API reference (docs/reference/api.md) lists every public name, and only public names:
each name in the ``__all__`` of the library's public modules is documented by a directive,
under its own module's name or (a class or function re-exported elsewhere) under another."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path
from types import ModuleType

import reactive_aio.adapters
import reactive_aio.connectors

PAGE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "api.md"
_DIRECTIVE = re.compile(r"^\.\. auto(?:class|function|exception|data|attribute):: ([\w.]+)", re.M)


def public_modules() -> list[ModuleType]:
    """The modules whose ``__all__`` is the public API: the package, its kits, the Spark
    bridge, and every public module of the adapters and connectors."""
    names = ["reactive_aio", "reactive_aio.lowlevel", "reactive_aio.testing", "reactive_aio.spark"]
    for package in (reactive_aio.adapters, reactive_aio.connectors):
        names.append(package.__name__)
        names += [
            f"{package.__name__}.{found.name}"
            for found in pkgutil.iter_modules(package.__path__)
            if not found.name.startswith("_")
        ]
    return [importlib.import_module(name) for name in names]


def documented(text: str) -> list[tuple[str, str]]:
    """(module, name) of every autodoc directive on the page."""
    return [
        (module, name)
        for module, _, name in (target.rpartition(".") for target in _DIRECTIVE.findall(text))
    ]


def test_every_public_name_is_in_the_reference_and_nothing_else() -> None:
    page = documented(PAGE.read_text(encoding="utf-8"))
    modules = {module.__name__: module for module in public_modules()}
    public = {(name, item) for name, module in modules.items() for item in module.__all__}
    assert not [target for target in page if target not in public], "not a public name"
    objects = {id(getattr(modules[module], name)) for module, name in page}
    missing = [
        f"{module}.{name}"
        for module, name in sorted(public)
        if (module, name) not in page
        # a class or function documented where another module exports it is documented
        and not (
            hasattr(getattr(modules[module], name), "__qualname__")
            and id(getattr(modules[module], name)) in objects
        )
    ]
    assert not missing, f"public names missing from {PAGE.name}: {missing}"


def test_the_parser_finds_directives() -> None:
    text = ".. autoclass:: reactive_aio.Flux\n   :members:\n.. autodata:: reactive_aio.MAX_DEMAND\n"
    assert documented(text) == [("reactive_aio", "Flux"), ("reactive_aio", "MAX_DEMAND")]
