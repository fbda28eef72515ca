"""The port carries every official test name, and at least ten checks of its own."""

from __future__ import annotations

import pytest

from reactive_aio.tck.__main__ import main
from reactive_aio.tck._rules import OFFICIAL, coverage, extra_checks, python_name


def test_all_94_official_names_are_present() -> None:
    present, total, missing = coverage()
    print(f"official TCK names present: {present}/{total}; extra checks: {len(extra_checks())}")
    assert total == 94
    assert not missing, missing
    assert present == 94


def test_at_least_ten_extra_checks() -> None:
    assert len(extra_checks()) >= 10, extra_checks()


def test_snake_case_names() -> None:
    assert python_name("required_spec109_subscribeThrowNPEOnNullSubscriber") == (
        "test_required_spec109_subscribe_throw_npe_on_null_subscriber"
    )
    assert sum(len(names) for names in OFFICIAL.values()) == 38 + 27 + 26 + 3


def test_cli_coverage_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--coverage"]) == 0
    assert capsys.readouterr().out.startswith("94/94 official TCK test names present; ")
