"""What a fresh interpreter imports: for the checks that a module stays light to import."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Sequence


def imported_after(statements: str, modules: Sequence[str]) -> list[str]:
    """Which of *modules* a fresh interpreter has imported once it ran *statements*, sorted."""
    probe = f"import sys\n{statements}\nprint(sorted(set(sys.modules) & set({list(modules)!r})))"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    return list(ast.literal_eval(done.stdout))
