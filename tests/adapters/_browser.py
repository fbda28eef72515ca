"""Headless Chromium driven over its DevTools protocol, with nothing but `websockets`.

Enough of the protocol for a test that loads a page and reads its DOM: open a tab, navigate,
evaluate an expression, take a screenshot. Commands go over the browser's one websocket, each answered by the
message with its id; events the browser sends meanwhile are skipped.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import os
import shutil
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, final

import attrs
import websockets

CANDIDATES = ("chromium", "chromium-browser", "google-chrome")
START_TIMEOUT = 30.0


def find_chromium() -> str | None:
    """``$CHROMIUM``, or the first Chromium on the PATH (scripts/setup installs Debian's)."""
    override = os.environ.get("CHROMIUM")
    if override:
        return override
    return next((path for name in CANDIDATES if (path := shutil.which(name))), None)


@final
@attrs.define(eq=False)
class DevTools:
    """One connection to the browser; a tab is addressed by its session id."""

    _socket: Any
    _ids: itertools.count[int] = attrs.field(factory=lambda: itertools.count(1), init=False)

    async def call(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None
    ) -> dict[str, Any]:
        """Send one command and return its result; a protocol error raises `RuntimeError`."""
        number = next(self._ids)
        message: dict[str, Any] = {"id": number, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        await self._socket.send(json.dumps(message))
        while True:
            answer = json.loads(await self._socket.recv())
            if answer.get("id") != number:
                continue  # an event, or the answer to nobody waiting
            if "error" in answer:
                raise RuntimeError(f"{method}: {answer['error']}")
            result: dict[str, Any] = answer["result"]
            return result

    async def open(self, url: str) -> str:
        """A new tab showing *url*; returns its session id."""
        target = await self.call("Target.createTarget", {"url": "about:blank"})
        attached = await self.call(
            "Target.attachToTarget", {"targetId": target["targetId"], "flatten": True}
        )
        session: str = attached["sessionId"]
        await self.call("Page.navigate", {"url": url}, session)
        return session

    async def evaluate(self, session: str, expression: str) -> Any:
        """The JSON value of *expression* evaluated in the tab."""
        done = await self.call(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True}, session
        )
        if "exceptionDetails" in done:
            raise RuntimeError(f"{expression}: {done['exceptionDetails']}")
        return done["result"].get("value")

    async def screenshot(self, session: str, width: int = 1100, height: int = 800) -> bytes:
        """A PNG of the tab, its viewport set to *width* by *height* CSS pixels first."""
        metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}
        await self.call("Emulation.setDeviceMetricsOverride", metrics, session)
        shot = await self.call("Page.captureScreenshot", {"format": "png"}, session)
        return base64.b64decode(shot["data"])


@asynccontextmanager
async def headless_chromium(executable: str, profile: Path) -> AsyncIterator[DevTools]:
    """Start *executable* headless with a fresh *profile* directory; stop it on exit."""
    process = await asyncio.create_subprocess_exec(
        executable,
        "--headless",
        # A container, or root, has no user namespaces for the sandbox; the page is our own.
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",  # a container's /dev/shm is often too small
        "--no-first-run",
        "--remote-debugging-port=0",  # the port it chose goes into DevToolsActivePort
        f"--user-data-dir={profile}",
        "about:blank",
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
        start_new_session=True,  # its helpers share its process group, stopped together
    )
    try:
        endpoint = await _endpoint(profile / "DevToolsActivePort", process)
        async with websockets.connect(endpoint, max_size=None) as socket:
            yield DevTools(socket)
    finally:
        if process.returncode is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(process.wait(), 10)
            except TimeoutError:
                os.killpg(process.pid, signal.SIGKILL)
                await process.wait()


async def _endpoint(active_port: Path, process: asyncio.subprocess.Process) -> str:
    """The browser's websocket, from the file Chromium writes once it listens."""
    async with asyncio.timeout(START_TIMEOUT):
        while True:
            if process.returncode is not None:
                raise RuntimeError(f"chromium exited with {process.returncode} at start")
            lines = (await asyncio.to_thread(_read_lines, active_port))[:2]
            if len(lines) == 2:
                port, path = lines
                return f"ws://127.0.0.1:{port}{path}"
            await asyncio.sleep(0.05)


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
