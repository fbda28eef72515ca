"""Results are staged and swapped in one rename each: a reader sees the old or the new, a run
that does not publish leaves the old as it was."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from reactive_aio_app.pipeline._outputs import Staging, _exchange


def _results(out: Path, tag: str) -> None:
    (out / "carrier_hourly").mkdir(parents=True)
    (out / "carrier_hourly" / "part-0.parquet").write_text(tag)
    (out / "delays.png").write_text(tag)


def test_publish_replaces_each_result_and_keeps_nothing_of_the_old(tmp_path: Path) -> None:
    _results(tmp_path, "old")
    (tmp_path / "carrier_hourly" / "part-1.parquet").write_text("old")
    staging = Staging.create(tmp_path)
    _results(staging.root, "new")
    (staging.path("rejected")).mkdir()
    assert staging.publish() == ["carrier_hourly", "delays.png", "rejected"]
    assert sorted(p.name for p in (tmp_path / "carrier_hourly").iterdir()) == ["part-0.parquet"]
    assert (tmp_path / "carrier_hourly" / "part-0.parquet").read_text() == "new"
    assert (tmp_path / "delays.png").read_text() == "new"
    assert (tmp_path / "rejected").is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "carrier_hourly",
        "delays.png",
        "rejected",
    ]


def test_discard_leaves_the_previous_results(tmp_path: Path) -> None:
    _results(tmp_path, "old")
    staging = Staging.create(tmp_path)
    _results(staging.root, "half")
    staging.discard()
    assert (tmp_path / "carrier_hourly" / "part-0.parquet").read_text() == "old"
    assert (tmp_path / "delays.png").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["carrier_hourly", "delays.png"]


def test_a_killed_runs_staging_is_removed_by_the_next(tmp_path: Path) -> None:
    stale = Staging.create(tmp_path)
    _results(stale.root, "killed")
    fresh = Staging.create(tmp_path)
    assert not stale.root.exists()
    assert fresh.root.exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="renameat2 is Linux's")
def test_directories_swap_in_one_step_on_linux(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "x").write_text("a")
    (b / "x").write_text("b")
    assert _exchange(a, b)  # the system call is there: the fallback is not what runs here
    assert ((a / "x").read_text(), (b / "x").read_text()) == ("b", "a")
