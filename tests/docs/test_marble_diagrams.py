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
    assert labels["buffer/boundary"] == "a.buffer(b).map(len)"
    assert set(labels) == set(examples.EXAMPLES)
    assert set(paths) == {key.partition("/")[0] for key in labels}
    assert paths["buffer"] == [
        "/_static/marbles/buffer.svg",
        "/_static/marbles/buffer-boundary.svg",
    ]
    for key, label in labels.items():
        svg = (tmp_path / f"{key.replace('/', '-')}.svg").read_text(encoding="utf-8")
        texts = [unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]
        assert label in texts
        assert f"{key.partition('/')[0]}(" in label


def test_marble_colours_keep_text_readable(ext: Any) -> None:
    _, svg = ext
    assert svg.contrast("#000000", "#ffffff") == pytest.approx(21.0)
    for fill in svg._PALETTE:
        assert svg.contrast(svg._TEXT, fill) >= 7.0, fill  # WCAG AAA for normal text
