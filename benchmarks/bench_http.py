"""HTTP: NDJSON and server-sent events through the web adapters against the framework's own
streaming response over an async generator, on the same server, read by the same client.

Each workload starts a real server in a child process on 127.0.0.1 (``benchmarks._http_server``:
a FastAPI app on uvicorn, or an ``aiohttp.web`` application), with the event loop being measured,
and reads every response with an ``aiohttp`` client in this process. The adapters run with their
default settings; the plain form yields one encoded line (or event) per item, which is what a
``StreamingResponse`` over an async generator is usually given. Both write byte-identical bodies,
and every response is checked for its line count and byte count. CPU time covers the server
process and the client; the ratios compare wall time (the throughput a client sees).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the `benchmarks` package importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._harness import ROOT, Fixture, Goal, Variant, Workload
from benchmarks._http_server import ndjson_line, sse_event
from benchmarks._standalone import standalone

_BASE: dict[str, str] = {}
"""Base URL of each running server, by server name, while a workload's fixture is entered."""

_START_TIMEOUT_S = 60.0


class _Servers(Fixture):
    """Server processes started for one workload on one loop, stopped by their pid."""

    def __init__(self) -> None:
        self.processes: list[subprocess.Popen[str]] = []
        self.urls: list[str] = []

    def start(self, server: str, loop: str) -> str:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(ROOT), env.get("PYTHONPATH"))))
        process = subprocess.Popen(
            [sys.executable, "-m", "benchmarks._http_server", server, loop],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.processes.append(process)
        assert process.stdout is not None
        line = process.stdout.readline()  # the server prints its port once it accepts
        if not line:
            raise RuntimeError(f"{server} server on {loop} exited with {process.wait()}")
        url = f"http://127.0.0.1:{json.loads(line)['port']}"
        self.urls.append(url)
        return url

    def stop(self) -> None:
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            if process.stdout is not None:
                process.stdout.close()

    def cpu_seconds(self) -> float:
        ticks = os.sysconf("SC_CLK_TCK")
        total = 0.0
        for process in self.processes:
            with open(f"/proc/{process.pid}/stat", encoding="ascii") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / ticks  # utime + stime
        return total

    def start_counting_calls(self) -> None:
        for url in self.urls:
            urllib.request.urlopen(f"{url}/_calls/start", timeout=30).read()

    def stop_counting_calls(self) -> int:
        return sum(
            int(urllib.request.urlopen(f"{url}/_calls/stop", timeout=30).read())
            for url in self.urls
        )


def _serving(server: str) -> Callable[[str], contextlib.AbstractContextManager[Fixture]]:
    @contextlib.contextmanager
    def fixture(loop: str) -> Iterator[Fixture]:
        if server in _BASE:
            raise RuntimeError(f"a {server} server is already running for another workload")
        servers = _Servers()
        try:
            _BASE[server] = servers.start(server, loop)
            yield servers
        finally:
            _BASE.pop(server, None)
            servers.stop()

    return fixture


async def _fetch(server: str, path: str, n: int) -> tuple[int, int]:
    """GET ``path?n=`` from *server* and return (line breaks, bytes) of the body."""
    import aiohttp

    lines = size = 0
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"{_BASE[server]}{path}", params={"n": str(n)}) as response,
    ):
        response.raise_for_status()
        async for chunk in response.content.iter_any():
            lines += chunk.count(b"\n")
            size += len(chunk)
    return lines, size


def _client(server: str, path: str) -> Callable[[int], Coroutine[Any, Any, object]]:
    async def run(n: int) -> object:
        return await _fetch(server, path, n)

    run.__name__ = f"{server}_{path.strip('/').replace('/', '_').replace('?', '_')}"
    return run


@functools.lru_cache(maxsize=64)
def _ndjson_expected(n: int) -> tuple[int, int]:
    return n, sum(len(ndjson_line(i)) for i in range(n))


@functools.lru_cache(maxsize=64)
def _sse_expected(n: int) -> tuple[int, int]:
    return 2 * n, sum(len(sse_event(i)) for i in range(n))


_WEB = ("fastapi", "uvicorn", "aiohttp", "reactive_aio.adapters.starlette")
_FASTAPI_PLAIN = "FastAPI StreamingResponse(async gen)"
_AIOHTTP_PLAIN = "aiohttp StreamResponse.write(async gen)"


def _ndjson(server: str) -> Workload:
    if server == "uvicorn":
        ours, plain, was = "reactive_aio ndjson_response (FastAPI)", _FASTAPI_PLAIN, 0.73
        framework = "FastAPI on uvicorn"
    else:
        ours, plain, was = "reactive_aio ndjson_response (aiohttp)", _AIOHTTP_PLAIN, 0.71
        framework = "aiohttp.web"
    variants = [
        Variant(
            ours,
            _client(server, "/ndjson/ours"),
            role="subject",
            needs=_WEB,
            note="ndjson_response(Flux.range(0, n).map(record)), default settings",
            versus=(plain,),
        ),
        Variant(
            plain,
            _client(server, "/ndjson/plain"),
            role="floor",
            needs=_WEB,
            note="the framework's streaming response over an async generator, one line per write",
        ),
    ]
    if server == "uvicorn":  # what a wider window buys (the default requests one item at a time)
        windowed = f"{ours.removesuffix(')')}, window=64)"
        variants.insert(
            1,
            Variant(
                windowed,
                _client(server, "/ndjson/ours?window=64"),
                role="subject",
                needs=_WEB,
                note="the same with window=64",
                versus=(plain,),
            ),
        )
    return Workload(
        key="H1" if server == "uvicorn" else "H2",
        name=f"ndjson_{'fastapi' if server == 'uvicorn' else 'aiohttp'}",
        title=f"NDJSON over HTTP, {framework}, lines per second",
        description=(
            f"One response of n compact JSON lines from {framework} on 127.0.0.1 (a server "
            "process with the loop measured), read by an aiohttp client."
        ),
        metric="items/s",
        expected=_ndjson_expected,
        n=200_000,
        quick_n=2_000,
        clock="wall",
        fixed_n=True,
        rounds=5,
        fixture=_serving(server),
        variants=tuple(variants),
        goals=(
            Goal(
                f"NDJSON over HTTP, 200k lines, {framework}: adapter vs plain streaming response",
                ours,
                plain,
                "speed",
                1.0,
                was,
            ),
        ),
    )


def _sse() -> Workload:
    ours = "reactive_aio sse_response (FastAPI)"
    return Workload(
        key="H3",
        name="sse_fastapi",
        title="server-sent events over HTTP, FastAPI on uvicorn, events per second",
        description=(
            "One response of n events (one compact JSON data line each) from FastAPI on "
            "uvicorn, read by an aiohttp client."
        ),
        metric="items/s",
        expected=_sse_expected,
        n=50_000,
        quick_n=2_000,
        clock="wall",
        fixed_n=True,
        rounds=5,
        fixture=_serving("uvicorn"),
        variants=(
            Variant(
                ours,
                _client("uvicorn", "/sse/ours"),
                role="subject",
                needs=_WEB,
                note="sse_response(Flux.range(0, n).map(record)), default settings",
            ),
            Variant(
                _FASTAPI_PLAIN,
                _client("uvicorn", "/sse/plain"),
                role="floor",
                needs=_WEB,
                note="StreamingResponse over an async generator of events; no keep-alive",
            ),
        ),
    )


WORKLOADS = (_ndjson("uvicorn"), _ndjson("aiohttp"), _sse())


if __name__ == "__main__":
    raise SystemExit(standalone(WORKLOADS, sys.argv[1:]))
