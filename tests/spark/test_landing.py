"""The commit protocol with real writer processes: several at once on one target, one killed
with SIGKILL and started again, a reader polling throughout (`benchmarks.landing_writers`
runs the same trial twenty times)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.landing_writers import failures, trial


@pytest.mark.parametrize("number", [0, 1], ids=["two writers", "three writers, one killed"])
def test_writer_processes_on_one_target_land_every_position_once(
    tmp_path: Path, number: int
) -> None:
    result = trial(tmp_path, number, rows=2_000)
    assert failures(result) == []
    assert result["reader_polls"]
