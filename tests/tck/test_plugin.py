"""The kit as users meet it: a verification in a pytest-asyncio strict-mode project, and the
command line."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from reactive_aio import Flux, Publisher
from reactive_aio.tck.__main__ import main

from .broken.publishers import FlawedPublisher

ROOT = Path(__file__).resolve().parents[2]

USER_TEST = """
from reactive_aio import Flux, Publisher
from reactive_aio.tck import PublisherVerification


class TestUserRange(PublisherVerification[int]):
    def create_publisher(self, elements: int) -> Publisher[int]:
        return Flux.range(0, elements)
"""


def test_verification_runs_in_strict_mode_with_markers_and_scale(tmp_path: Path) -> None:
    (tmp_path / "test_user.py").write_text(USER_TEST)
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
    if not any(ep.name == "reactive_aio_tck" for ep in entry_points(group="pytest11")):
        args += ["-p", "reactive_aio.tck.plugin"]
    args += ["-o", "asyncio_mode=strict", "--strict-markers", "--tck-timeout-scale", "2"]
    args += ["-m", "required and not stochastic", "test_user.py"]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"\b2\d passed\b", done.stdout), done.stdout


def range_publisher(n: int) -> Publisher[int]:
    return Flux.range(0, n)


def recursive_publisher(n: int) -> Publisher[int]:
    return FlawedPublisher(n, "no_trampoline")


def test_cli_reports_per_rule_and_totals(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([f"{__name__}:range_publisher", "-k", "spec30"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert re.fullmatch(r"\d+ passed, 0 failed, \d+ skipped", lines[-1]), lines[-1]
    assert any(line.startswith("PASSED") and " 3.3 " in line for line in lines), lines


def test_cli_fails_on_a_broken_publisher(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([f"{__name__}:recursive_publisher", "-k", "spec303"]) == 1
    out = capsys.readouterr().out
    assert out.strip().splitlines()[-1] == "0 passed, 1 failed, 0 skipped", out
    assert "rule 3.3" in out
