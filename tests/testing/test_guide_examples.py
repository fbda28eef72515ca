"""Every Python example of docs/guides/testing.md runs and passes its own assertions."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

GUIDE = Path(__file__).parents[2] / "docs" / "guides" / "testing.md"
EXAMPLES = re.findall(r"```python\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S)


def test_the_guide_has_examples() -> None:
    assert len(EXAMPLES) >= 5


@pytest.mark.parametrize("source", EXAMPLES, ids=[f"example{i}" for i in range(len(EXAMPLES))])
def test_guide_example_runs(source: str) -> None:
    exec(compile(source, str(GUIDE), "exec"), {"__name__": "guide_example"})
