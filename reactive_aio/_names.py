"""Public namespaces: the one public home of each name, and packages that import their parts
only when a name is first read.

``import reactive_aio`` would otherwise build every operator's classes (a third of a second)
before a program that needs only, say, ``reactive_aio.spark.spark_session`` can start its JVM.
"""

from __future__ import annotations

__all__ = ("fix_module_names", "lazy_namespace")

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def fix_module_names(module: str, names: tuple[str, ...] | None = None) -> None:
    """Make tracebacks, reprs and docs show ``module.X``, the one public home of each of
    *names* (default: the module's ``__all__``) that is a class of a private module."""
    namespace = vars(sys.modules[module])
    for name in namespace["__all__"] if names is None else names:
        obj = namespace[name]
        if isinstance(obj, type) and obj.__module__.startswith("reactive_aio._"):
            obj.__module__ = module


def lazy_namespace(
    module: str, homes: Mapping[str, tuple[str, ...]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` (PEP 562) for the package *module*, whose public names
    live in the private modules *homes* names (relative to the package): a module is imported
    when one of its names is first read, and all its names are then bound in the package
    (`fix_module_names` applied)."""
    namespace = vars(sys.modules[module])
    home_of = {name: home for home, names in homes.items() for name in names}

    def __getattr__(name: str) -> Any:
        home = home_of.get(name)
        if home is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        loaded = importlib.import_module(home, module)
        for each in homes[home]:
            namespace[each] = getattr(loaded, each)
        fix_module_names(module, homes[home])
        return namespace[name]

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(home_of))

    return __getattr__, __dir__
