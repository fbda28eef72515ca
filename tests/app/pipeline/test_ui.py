"""``reactive-aio pipeline --ui``: a mistake in the address, or a port in use, fails in one
line before Spark starts; a real run's page, loaded in headless Chromium, follows the stages
as they stream, then shows the summary and stays until Ctrl-C, which exits 0; the summary is
in ``OUT/summary.json`` too."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys
from pathlib import Path
from typing import Any

import pytest

from reactive_aio_app.pipeline._progress import Progress
from reactive_aio_app.pipeline._results import PipelineResult
from reactive_aio_app.pipeline._summary import SUMMARY_FILE, write_summary
from reactive_aio_app.pipeline._ui import LivePage
from tests.adapters._browser import find_chromium, headless_chromium

from .test_cli import PROG, _cli, _env

CHROMIUM = find_chromium()
SCREENSHOT = os.environ.get("REACTIVE_AIO_UI_SCREENSHOT")
"""Where to keep the page's screenshot taken while it streams (docs/_static/pipeline-ui.png
is one); the test only checks it otherwise."""
RECORDS = 5_000
# The stages' counts as the page shows them: one cell per stage and figure.
READ_ROWS = (
    "Object.fromEntries(['source', 'validation', 'enrichment', 'batching', 'sink']"
    ".map((stage) => [stage, document.getElementById(`${stage}-rows`).textContent]))"
)
SUMMARY_KEYS = {
    "role",
    "read",
    "landed",
    "rejected",
    "skipped",
    "resumed",
    "writes",
    "records_per_second",
    "seconds",
    "phases",
    "rejections",
    "carriers",
    "dead_letter",
    "outputs",
}


@pytest.mark.parametrize(
    ("address", "problem"),
    [
        ("localhost", "'localhost' is not [HOST:]PORT"),
        ("127.0.0.1:99999", "'127.0.0.1:99999' is not [HOST:]PORT"),
        ("127.0.0.1:", "'127.0.0.1:' is not [HOST:]PORT"),
        ("busy", "cannot listen on 127.0.0.1:{port}: Address already in use"),
    ],
)
def test_a_malformed_or_busy_address_fails_in_one_line_before_spark_starts(
    address: str, problem: str, tmp_path: Path
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        if address == "busy":
            address = f"{port}"  # the host by default: 127.0.0.1
        completed = _cli("--out", str(tmp_path / "out"), "--ui", address)
    assert completed.returncode == 2
    lines = completed.stderr.splitlines()
    assert len(lines) == 1, completed.stderr
    assert lines[0].startswith(f"{PROG}: error: argument --ui: {problem.format(port=port)}; ")
    assert completed.stdout.splitlines() == ["pyspark not imported"]


async def test_the_updates_end_cleanly_when_the_page_closes() -> None:
    # What Ctrl-C after a run does to an open event stream: it completes, with no error.
    page = LivePage(Progress("off"), socket.socket(), every=0.01)
    updates = asyncio.ensure_future(page.updates().to_list())
    await asyncio.sleep(0.05)  # a few updates
    await page.close()
    snapshots = await asyncio.wait_for(updates, 5)
    assert snapshots
    assert all(snapshot["stages"] == [] for snapshot in snapshots)


def test_the_summary_file_holds_what_the_summary_says(tmp_path: Path) -> None:
    result = PipelineResult(
        read=10,
        landed=8,
        rejected=2,
        seconds=3.25,
        out=tmp_path,
        chart=tmp_path / "delays.png",
        summary=[
            {
                "carrier": "UA",
                "airline": "United Air Lines Inc.",
                "flights": 8,
                "cancelled": 1,
                "dep_delay_mean": 2.5,
                "arr_delay_mean": None,
            }
        ],
        reasons={"dep_time": 2},
        phases={"start": 1.0, "stream": 2.0, "aggregate": 0.25},
        writes=1,
    )
    (tmp_path / SUMMARY_FILE).write_text("an earlier run's")
    path = write_summary(result)
    assert path == tmp_path / SUMMARY_FILE
    assert [p.name for p in tmp_path.iterdir()] == [SUMMARY_FILE]  # replaced, nothing aside
    written = json.loads(path.read_text(encoding="utf-8"))
    assert set(written) == SUMMARY_KEYS
    assert set(written["outputs"]) == {
        "out",
        "events",
        "carrier_hourly",
        "rejected",
        "chart",
        "logs",
    }
    assert written["outputs"]["chart"] == str(tmp_path / "delays.png")
    assert (written["read"], written["landed"], written["rejected"], written["writes"]) == (
        10,
        8,
        2,
        1,
    )
    assert written["phases"] == {"start": 1.0, "stream": 2.0, "aggregate": 0.25}
    assert written["records_per_second"] == 5.0  # 10 records streamed in 2 s
    assert written["rejections"] == {"dep_time": 2}
    assert written["carriers"] == result.summary


@pytest.mark.skipif(
    CHROMIUM is None,
    reason="no Chromium: scripts/setup installs Debian's chromium when run as root; "
    "elsewhere install it or set CHROMIUM=/path/to/chrome",
)
async def test_the_page_follows_the_run_then_shows_its_summary_until_ctrl_c(
    tmp_path: Path,
) -> None:
    assert CHROMIUM is not None
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/"
    out = tmp_path / "out"
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "reactive_aio_app", "pipeline", "--master", "local[2]",
        "--out", str(out), "--limit", str(RECORDS), "--speed", "40000", "--max-latency", "1",
        "--ui", f"127.0.0.1:{port}",
        stdout=asyncio.subprocess.DEVNULL,  # the summary: the page and summary.json show it
        stderr=asyncio.subprocess.PIPE,
        env=_env(),
    )  # fmt: skip
    assert child.stderr is not None
    stderr: list[str] = []
    staying = asyncio.Event()

    async def read_stderr(stream: asyncio.StreamReader) -> None:
        async for line in stream:
            stderr.append(line.decode())
            if line.decode().startswith("the page stays at"):
                staying.set()

    reader = asyncio.ensure_future(read_stderr(child.stderr))
    try:
        async with headless_chromium(CHROMIUM, tmp_path / "profile") as browser:
            async with asyncio.timeout(60):
                while not any("the live page is at" in line for line in stderr):
                    assert child.returncode is None, "".join(stderr)
                    await asyncio.sleep(0.1)
            tab = await browser.open(url)

            async def shown(expression: str, seconds: float) -> Any:
                """The value of *expression* once it is truthy (the DOM changes in the
                browser, as updates arrive: poll it)."""
                async with asyncio.timeout(seconds):
                    while not (value := await browser.evaluate(tab, expression)):
                        assert child.returncode is None, "".join(stderr)
                        await asyncio.sleep(0.1)
                return value

            # The page loads, Spark starts (tens of seconds on a busy machine), the stream counts.
            await shown("document.getElementById('source-rows')?.textContent.match(/^[1-9]/)", 400)
            first = await browser.evaluate(tab, READ_ROWS)
            later = await shown(f"(({READ_ROWS})).sink !== {json.dumps(first['sink'])}", 30)
            assert later
            again = await browser.evaluate(tab, READ_ROWS)
            assert again != first
            streaming = await browser.evaluate(tab, "document.getElementById('state').textContent")
            assert streaming.startswith(("streaming", "committing"))
            bound = await browser.evaluate(
                tab, "document.getElementById('batching-buffered').textContent"
            )
            assert bound.endswith("/ 100,000")
            screenshot = await browser.screenshot(tab, height=320)
            assert screenshot.startswith(b"\x89PNG\r\n\x1a\n")
            if SCREENSHOT:
                await asyncio.to_thread(Path(SCREENSHOT).write_bytes, screenshot)

            text = await shown(
                "!document.getElementById('summary').hidden"
                " && document.getElementById('summary-text').textContent",
                400,
            )
            assert f"read {RECORDS:,}: landed {RECORDS:,}, rejected 0" in text
            # The chart, served by the page, loaded in the browser.
            await shown("document.getElementById('chart').naturalWidth > 0", 30)
            final = await browser.evaluate(tab, READ_ROWS)
            assert final["sink"] == f"{RECORDS:,}"
            assert await browser.evaluate(tab, "document.getElementById('state').textContent") == (
                "done"
            )
        async with asyncio.timeout(30):
            await staying.wait()
        assert f"the page stays at {url}; Ctrl-C to stop\n" in stderr
        summary = json.loads(await asyncio.to_thread((out / SUMMARY_FILE).read_text, "utf-8"))
        assert set(summary) == SUMMARY_KEYS
        assert (summary["read"], summary["landed"], summary["rejected"]) == (RECORDS, RECORDS, 0)
        assert summary["outputs"]["chart"] == str(out / "delays.png")
        child.send_signal(signal.SIGINT)
        async with asyncio.timeout(60):
            assert await child.wait() == 0
        await reader
        assert "Traceback" not in "".join(stderr)
    finally:
        if child.returncode is None:
            child.kill()
            await child.wait()
        reader.cancel()
