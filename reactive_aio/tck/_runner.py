"""Run a verification without pytest's collection: for the command line and for tests of the
TCK itself. Each test method runs on a fresh instance, one after the other, on one loop."""

from __future__ import annotations

import asyncio
import re
from typing import Literal, final

import attrs
import pytest

from ._base import Verification

__all__ = ("Outcome", "run_verification", "test_names")

Status = Literal["passed", "failed", "skipped"]


@final
@attrs.frozen
class Outcome:
    """What one test method did."""

    name: str
    category: str
    status: Status
    message: str = ""

    @property
    def rule(self) -> str:
        """The rule number in the name (``"3.9"``), or ``""`` for setup checks."""
        match = re.search(r"spec(\d)(\d\d)", self.name)
        return f"{match[1]}.{int(match[2])}" if match else ""


def test_names(cls: type[Verification]) -> list[str]:
    """The test methods of *cls* in definition order (base classes first)."""
    names: list[str] = []
    for klass in reversed(cls.__mro__):
        for name in vars(klass):
            if name.startswith("test_") and name not in names:
                names.append(name)
    return names


test_names.__test__ = False  # type: ignore[attr-defined]  # a helper, not a pytest test


async def run_verification(
    cls: type[Verification], names: list[str] | None = None
) -> list[Outcome]:
    """Run the test methods of *cls* (all, or *names*) and return their outcomes."""
    outcomes = []
    for name in names if names is not None else test_names(cls):
        method = getattr(cls, name)
        category = getattr(method, "__tck_category__", "required")
        instance = cls()
        try:
            await getattr(instance, name)()
        except pytest.skip.Exception as skip:
            outcomes.append(Outcome(name, category, "skipped", str(skip.msg)))
        except Exception as exc:
            outcomes.append(Outcome(name, category, "failed", f"{type(exc).__name__}: {exc}"))
        else:
            outcomes.append(Outcome(name, category, "passed"))
        finally:
            instance.reset_env()
        for _ in range(3):  # let callbacks of the finished test run before the next one
            await asyncio.sleep(0)
    return outcomes
