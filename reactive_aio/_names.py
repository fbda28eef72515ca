"""Public namespaces: the one public home of each name, and packages that import their parts
only when a name is first read.

``import reactive_aio`` would otherwise build every operator's classes (a third of a second)
before a program that needs only, say, ``reactive_aio.spark.spark_session`` can start its JVM.
"""

from __future__ import annotations

__all__ = ("fix_module_names", "lazy_namespace")

import ast
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def fix_module_names(module: str, names: tuple[str, ...] | None = None) -> None:
    """Make tracebacks, reprs and docs show ``module.X``, the one public home of each of
    *names* (default: the module's ``__all__``) that is a class of a private module."""
    namespace = vars(sys.modules[module])
    for name in namespace["__all__"] if names is None else names:
        obj = namespace[name]
        if isinstance(obj, type) and obj.__module__.startswith("reactive_aio._"):
            obj.__module__ = module


def lazy_namespace(module: str) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` (PEP 562) for the package *module*, whose public names
    are the ones its ``if TYPE_CHECKING:`` block imports (what type checkers read, so the two
    cannot disagree): a name's home module is imported when the name is first read, and every
    public name of that module is then bound in the package (`fix_module_names` applied)."""
    package = sys.modules[module]
    namespace = vars(package)
    homes: dict[str, str] = {}
    source = Path(package.__file__ or "").read_text(encoding="utf-8")
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom), ast.unparse(statement)
                home = "." * statement.level + (statement.module or "")
                homes.update((alias.asname or alias.name, home) for alias in statement.names)

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        loaded = importlib.import_module(home, module)
        housed = tuple(n for n, h in homes.items() if h == home)
        for each in housed:
            namespace[each] = getattr(loaded, each)
        fix_module_names(module, housed)
        return namespace[name]

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(homes))

    return __getattr__, __dir__
