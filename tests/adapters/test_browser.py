"""The web guide's SSE example in a real browser: headless Chromium loads the page that
examples/fastapi_app.py serves, its EventSource reads /ticks, and the events show in the DOM."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
pytest.importorskip("websockets")

from ._browser import find_chromium, headless_chromium
from ._support import uvicorn_server
from .test_examples import example

pytestmark = pytest.mark.web

CHROMIUM = find_chromium()
EVENTS = 5
READ_DOM = "[...document.querySelectorAll('#ticks li')].map((li) => li.textContent)"


@pytest.mark.skipif(
    CHROMIUM is None,
    reason="no Chromium: scripts/setup installs Debian's chromium when run as root; "
    "elsewhere install it or set CHROMIUM=/path/to/chrome",
)
async def test_the_example_page_shows_the_events_its_event_source_reads(tmp_path: Path) -> None:
    assert CHROMIUM is not None
    app = example("fastapi_app").app
    async with uvicorn_server(app) as url, headless_chromium(CHROMIUM, tmp_path) as browser:
        tab = await browser.open(f"{url}/?every=0.05")
        async with asyncio.timeout(20):
            while True:
                shown = await browser.evaluate(tab, READ_DOM)
                if len(shown) >= EVENTS:
                    break
                await asyncio.sleep(0.05)  # the DOM changes inside the browser: poll it
        status = await browser.evaluate(tab, "document.getElementById('status').textContent")
    assert shown[:EVENTS] == [f"{i} (id {i})" for i in range(EVENTS)]
    assert status == "open"
