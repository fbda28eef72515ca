"""The progress display on a terminal: a bar that says ``committing`` while the sink writes
and from the source's end until the last batch landed, rather than sitting at 100%, and keeps
the final figures."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import Any

from reactive_aio.spark import SinkStatistics
from reactive_aio_app.pipeline import Progress, run_pipeline
from reactive_aio_app.pipeline._progress import sink_figures


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_bar_shows_committing_and_ends_with_what_landed(spark: Any, tmp_path: Path) -> None:
    screen = _Terminal()
    progress = Progress.auto(screen)
    assert progress.mode == "bar"
    asyncio.run(
        run_pipeline(
            out=tmp_path,
            limit=3_000,
            spark=spark,
            chart=False,
            progress=progress,
            log=io.StringIO(),
        )
    )
    frames = screen.getvalue().replace("\r", "\n").splitlines()
    bar = [frame for frame in frames if "ev/s" in frame or "ev]" in frame]
    assert any(frame.startswith("committing:") for frame in bar), frames
    assert bar[-1].startswith("streamed: 100%")
    assert "landed=3,000" in bar[-1]
    phases = [frame.split("] ", 1)[1] for frame in frames if frame.startswith("[")]
    assert phases[0].startswith("starting Spark")
    assert phases[-1].startswith("replacing the results in")


def test_every_figure_names_its_unit() -> None:
    stats = SinkStatistics(
        rows_received=9_000,
        rows_written=4_000,
        rows_skipped=0,
        writes=1,
        buffered_rows=5_000,
        outstanding_demand=1_022,
        writing=False,
    )
    figures = sink_figures(stats, 3, source_done=False)
    assert figures.state == "streaming"
    assert dict(figures.values) == {
        "landed": "4,000",
        "rejected": "3",
        "requested": "1,022 chunks",  # the sink's demand: chunks of records, not records
        "buffered": "5,000 rows",
    }
    assert sink_figures(stats, 3, source_done=True).state == "committing 5,000 rows"
