"""HTTP: NDJSON and server-sent events through the web adapters against the framework's own
streaming response over an async generator, on the same server, read by the same client.

Each workload starts a real server in a child process on 127.0.0.1 (``benchmarks._http_server``:
a FastAPI app on uvicorn, or an ``aiohttp.web`` application), with the event loop being measured,
and reads every response with an ``aiohttp`` client in this process. The adapters run with their
default settings; the plain form yields one encoded line (or event) per item, which is what a
``StreamingResponse`` over an async generator is usually given, and the chunked floors yield 64
or 256 lines at a time, joined over ``map`` and encoded once per chunk, which is what an expert
writes for speed (the adapters' goal). Both write byte-identical bodies, and every response is
checked for its line count and byte count. CPU time covers the server process and the client;
the ratios compare wall time (the throughput a client sees).
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
            stdin=subprocess.PIPE,  # closed by stop(), or by the kernel if this process dies
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
            for pipe in (process.stdin, process.stdout):
                if pipe is not None:
                    pipe.close()

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
_FRAMEWORK = {"uvicorn": ("FastAPI", "FastAPI on uvicorn"), "aiohttp": ("aiohttp", "aiohttp.web")}
_PLAIN = {
    "uvicorn": "FastAPI StreamingResponse(async gen)",
    "aiohttp": "aiohttp StreamResponse.write(async gen)",
}


CHUNKS = (64, 256)
"""Lines per write of the chunked floors: what an expert joins per yield for speed."""


def _chunked_name(server: str, lines: int) -> str:
    return f"{_PLAIN[server]}, {lines} lines per yield"


def _workload(
    key: str,
    body: str,
    server: str,
    *,
    n: int,
    windows: tuple[int, ...] = (),
    was: float | None = None,
    chunked_was: tuple[float, ...] = (),
) -> Workload:
    """*body* (``"ndjson"`` or ``"sse"``) from *server*: the adapter with its defaults (and with
    each of *windows*) against the framework's own streaming response, one line per write and
    (NDJSON) `CHUNKS` lines per write; a *was* sets the goals, *chunked_was* those of the
    chunked floors."""
    short, framework = _FRAMEWORK[server]
    plain = _PLAIN[server]
    ours = f"reactive_aio {body}_response ({short})"
    chunks = CHUNKS if body == "ndjson" else ()
    chunked = tuple(_chunked_name(server, lines) for lines in chunks)
    variants = [
        Variant(
            ours,
            _client(server, f"/{body}/ours"),
            role="subject",
            needs=_WEB,
            note=f"`{body}_response(Flux.range(0, n).map(record))`, default settings",
            versus=(plain, *chunked),
        ),
        *(
            Variant(
                f"reactive_aio {body}_response ({short}, window={window})",
                _client(server, f"/{body}/ours?window={window}"),
                role="subject",
                needs=_WEB,
                note=f"the same with `window={window}`",
                versus=(plain, *chunked),
            )
            for window in windows
        ),
        Variant(
            plain,
            _client(server, f"/{body}/plain"),
            role="floor",
            needs=_WEB,
            note="the framework's streaming response over an async generator, one "
            + ("line" if body == "ndjson" else "event, no keep-alive,")
            + " per write",
        ),
        *(
            Variant(
                name,
                _client(server, f"/ndjson/chunked?lines={lines}"),
                role="floor",
                needs=_WEB,
                note=f"the same over an async generator that yields {lines} lines at a time, "
                "joined over map and encoded once: fast, but no demand per socket beyond the "
                f"framework's, and a slow source's line waits until {lines} are ready",
            )
            for name, lines in zip(chunked, chunks, strict=True)
        ),
    ]
    what = "compact JSON lines" if body == "ndjson" else "events (one compact JSON data line each)"
    goals: list[Goal] = []
    if was is not None:
        text = f"NDJSON over HTTP, 200k lines, {framework}: adapter vs"
        goals.append(Goal(f"{text} one line per write", ours, plain, "speed", 1.0, was))
        goals += [
            Goal(f"{text} {lines} lines per write (the floor)", ours, name, "speed", 1.0, old)
            for name, lines, old in zip(chunked, chunks, chunked_was, strict=True)
        ]
    return Workload(
        key=key,
        name=f"{body}_{short.lower()}",
        title=f"{'NDJSON' if body == 'ndjson' else 'server-sent events'} over HTTP, {framework}",
        description=(
            f"One response of n {what} from {framework} on 127.0.0.1 (a server process running "
            "the loop measured), read by an aiohttp client; items per second."
        ),
        metric="items/s",
        expected=_ndjson_expected if body == "ndjson" else _sse_expected,
        n=n,
        quick_n=2_000,
        clock="wall",
        fixed_n=True,
        rounds=3,  # a run takes seconds: fewer, longer rounds keep the whole run near 20 min
        fixture=_serving(server),
        variants=tuple(variants),
        goals=tuple(goals),
    )


WORKLOADS = (
    # window=64 (the default before it was 256) shows what the wider default window buys.
    _workload(
        "H1", "ndjson", "uvicorn", n=200_000, windows=(64,), was=0.73, chunked_was=(0.78, 0.78)
    ),
    _workload("H2", "ndjson", "aiohttp", n=200_000, was=0.71, chunked_was=(0.78, 0.78)),
    _workload("H3", "sse", "uvicorn", n=50_000),
)


if __name__ == "__main__":
    raise SystemExit(standalone(WORKLOADS, sys.argv[1:]))
