"""The options' checks before Spark starts: an input that lacks a required column."""

from __future__ import annotations

from pathlib import Path

import pytest

from reactive_aio_app.pipeline._checks import UsageError, check_input


@pytest.mark.parametrize(
    ("name", "text", "what"),
    [
        ("flights.csv", "year,month\n2013,1\n", "header"),
        ("flights.jsonl", '{"year": "2013", "month": "1"}\n', "first record"),
    ],
)
def test_an_input_without_the_required_columns_is_refused_naming_them(
    tmp_path: Path, name: str, text: str, what: str
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UsageError, match=f"the {what} of {path} lacks day, sched_dep_time"):
        check_input(path)
