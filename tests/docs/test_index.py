"""The landing page says what the library is, for whom, and points at every guide and concept
page from its "Where to go" table (a page added later is not left to the sidebar alone)."""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_the_landing_page_points_at_every_guide_and_concept() -> None:
    text = (DOCS / "index.md").read_text(encoding="utf-8")
    assert "**For whom.**" in text
    table = text.split("**Where to go.**", 1)[1].split("```{toctree}", 1)[0]
    linked = set(re.findall(r"\{doc\}`([\w/-]+)`", table))
    pages = {
        page.relative_to(DOCS).with_suffix("").as_posix()
        for folder in ("guides", "concepts")
        for page in (DOCS / folder).glob("*.md")
    }
    assert pages <= linked, f"not in the landing page's table: {sorted(pages - linked)}"
    assert {"quickstart", "reference/api", "operators/index"} <= linked
