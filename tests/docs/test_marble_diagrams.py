"""The docs' marble diagrams: each shows its operator's call, and its colours stay readable."""

from __future__ import annotations

import importlib
import re
from html import unescape
from pathlib import Path
from typing import Any

import pytest

EXT = Path(__file__).parents[2] / "docs" / "_ext"


@pytest.fixture
def ext(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.syspath_prepend(str(EXT))
    return importlib.import_module("marble_examples"), importlib.import_module("marble_svg")


def test_every_diagram_carries_its_call_text(ext: Any, tmp_path: Path) -> None:
    examples, _ = ext
    paths = examples.record_all(tmp_path)
    labels = examples.call_texts()
    assert labels["map"] == "map(lambda x: x * 10)"
    assert labels["merge"] == "Flux.merge(a, b)"
    assert set(paths) == set(labels) == set(examples.EXAMPLES)
    for name in paths:
        svg = (tmp_path / f"{name}.svg").read_text(encoding="utf-8")
        texts = [unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]
        assert labels[name] in texts
        assert f"{name}(" in labels[name]


def test_marble_colours_keep_text_readable(ext: Any) -> None:
    _, svg = ext
    assert svg.contrast("#000000", "#ffffff") == pytest.approx(21.0)
    for fill in svg._PALETTE:
        assert svg.contrast(svg._TEXT, fill) >= 7.0, fill  # WCAG AAA for normal text
