"""The main job's live page: ``reactive-aio pipeline --ui [HOST:]PORT``.

One self-contained HTML page (inline CSS and script, no CDN) whose ``EventSource`` reads
``/updates``: server-sent events served by the library's own aiohttp adapter
(`reactive_aio.adapters.aiohttp.sse_response`) from a `Flux` of snapshots, one every half
second, each the figures of `pipeline_figures` with the rates since the one before. The
stages (source, validation, enrichment, batching, sink) each show their rate, the demand
the next stage signalled and has not received, what they buffer and its bound, and what
landed, was rejected and committed; a ``--source`` run also shows how far its consumer is
behind the stream. Once the run ends the page shows its summary (`summary_record`) and the
chart (``/chart.png``), and stays until Ctrl-C.

The socket is bound before anything starts (`listen`), so a port in use is a mistake in
the command, found before Spark starts.
"""

from __future__ import annotations

__all__ = ("LivePage", "listen", "pipeline_figures")

import asyncio
import contextlib
import socket
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from reactive_aio import Flux

from ._checks import UsageError
from ._progress import Progress
from ._summary import summary_record

if TYPE_CHECKING:
    from aiohttp import web

    from ._broker import StreamPositions
    from ._results import PipelineResult

_DEFAULT_HOST = "127.0.0.1"


def listen(address: str) -> socket.socket:
    """A socket listening on *address*, ``[HOST:]PORT`` (HOST by default 127.0.0.1; an
    IPv6 address in brackets); raises `UsageError` for a malformed address or one that
    cannot be bound (in use, not this machine's)."""
    host, colon, port_text = address.rpartition(":")
    host = host.removeprefix("[").removesuffix("]") if colon else _DEFAULT_HOST
    hint = "give a port (--ui 8050) or a host and a port (--ui 0.0.0.0:8050)"
    if not (port_text.isdigit() and int(port_text) < 65536 and host):
        raise UsageError("--ui", f"{address!r} is not [HOST:]PORT", hint)
    port = int(port_text)
    try:
        family, kind, protocol, _, where = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[
            0
        ]
        sock = socket.socket(family, kind, protocol)
    except OSError as exc:
        raise UsageError(
            "--ui", f"cannot listen on {address}: {exc.strerror or exc}", hint
        ) from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(where)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise UsageError(
            "--ui",
            f"cannot listen on {host}:{port}: {exc.strerror or exc}",
            "choose another port, or stop what listens there",
        ) from None
    sock.setblocking(False)
    return sock


def pipeline_figures(
    progress: Progress, positions: StreamPositions | None = None
) -> dict[str, Any]:
    """The figures of the run *progress* watches, as JSON-ready data: its phase and, once it
    streams, each stage's. The one place the page's figures come from: the sink's
    statistics and the per-chunk counts at the stage boundaries (`._stages`)."""
    figures: dict[str, Any] = {"phase": progress.phase, "state": "", "stages": [], "lag": None}
    sink, stages = progress.sink, progress.stages
    if sink is None or stages is None:
        return figures
    stats = sink.statistics()
    meters = stages.meters
    source_buffered = None
    if stages.source is not None:
        source_buffered = stages.source.statistics().in_hand
    if positions is not None:
        figures["lag"] = attrs.asdict(positions)
    figures["state"] = progress.figures().state

    def stage(name: str, rows: int, demand: int | None, **more: Any) -> dict[str, Any]:
        empty = {"buffered": None, "bound": None}
        return {"name": name, "rows": rows, "demand": demand, **empty, **more}

    figures["stages"] = [
        stage(
            "source",
            meters["source"].rows,
            meters["source"].outstanding,
            buffered=source_buffered,
        ),
        stage(
            "validation",
            meters["validation"].rows,
            meters["validation"].outstanding,
            rejected=stages.rejected(),
        ),
        stage("enrichment", meters["enrichment"].rows, meters["enrichment"].outstanding),
        stage(
            "batching",
            stats.rows_received,
            stats.outstanding_demand,
            buffered=stats.buffered_rows,
            bound=stages.batch_rows,
        ),
        stage(
            "sink",
            stats.rows_written,
            None,
            landed=stats.rows_written,
            skipped=stats.rows_skipped,
            committed=stats.writes,
            writing=stats.writing,
        ),
    ]
    return figures


def _with_rates(before: dict[str, Any], now: dict[str, Any]) -> dict[str, Any]:
    """*now*, each stage with its rate: rows per second since *before*."""
    seconds = now["time"] - before["time"]
    previous = {stage["name"]: stage["rows"] for stage in before["stages"]}
    for stage in now["stages"]:
        passed = stage["rows"] - previous.get(stage["name"], 0)
        stage["rate"] = round(passed / seconds, 1) if seconds > 0 else 0.0
    return now


@attrs.define(eq=False)
class LivePage:
    """The page of the run *progress* watches, served on *sock*; see the module docs."""

    progress: Progress
    sock: socket.socket
    every: float = 0.5
    """Seconds between updates."""
    _summary: dict[str, Any] | None = attrs.field(default=None, init=False)
    _chart: Path | None = attrs.field(default=None, init=False)
    _positions: StreamPositions | None = attrs.field(default=None, init=False)
    _closing: asyncio.Event = attrs.field(factory=asyncio.Event, init=False)
    _runner: web.AppRunner | None = attrs.field(default=None, init=False)
    _lag: asyncio.Task[None] | None = attrs.field(default=None, init=False)

    @property
    def url(self) -> str:
        host, port = self.sock.getsockname()[:2]
        return f"http://{f'[{host}]' if ':' in host else host}:{port}/"

    async def start(self) -> None:
        """Serve the page (its socket listens already)."""
        from aiohttp import web

        app = web.Application()
        app.router.add_get("/", self._page)
        app.router.add_get("/updates", self._updates)
        app.router.add_get("/chart.png", self._chart_png)
        # Open event streams end with the page (`_closing`): a second is plenty to let them.
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        await web.SockSite(self._runner, self.sock).start()
        self._lag = asyncio.get_running_loop().create_task(self._follow_lag())

    def finished(self, result: PipelineResult) -> None:
        """The run ended with *result*: the page shows its summary and chart from now on."""
        self._summary = summary_record(result)
        self._chart = result.chart

    async def close(self) -> None:
        self._closing.set()
        if self._lag is not None:
            self._lag.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._lag
        if self._runner is not None:
            await self._runner.cleanup()
        self.sock.close()

    def snapshot(self) -> dict[str, Any]:
        """What an update carries: the figures now, and the summary once the run ended."""
        figures = pipeline_figures(self.progress, self._positions)
        figures["time"] = time.monotonic()
        figures["summary"] = self._summary
        figures["chart"] = None if self._chart is None else "chart.png"
        return figures

    def updates(self) -> Flux[dict[str, Any]]:
        """A snapshot every `every` seconds (the first at once), with rates, until the page
        closes; a client too slow for them misses some (they are snapshots)."""

        async def closing() -> AsyncIterator[bool]:
            await self._closing.wait()
            yield True  # (a stream never carries None: rule 2.13)

        return (
            Flux.interval(self.every, delay=0)
            .on_backpressure_drop()
            .take_until(Flux.from_async_iterable(closing()))
            .map(lambda _: self.snapshot())
            .scan(_with_rates)
        )

    async def _follow_lag(self) -> None:
        """Keep the source's stream positions, while a run reads a stream."""
        from ._broker import stream_positions

        while True:
            stages = self.progress.stages
            if stages is not None and stages.source is not None:
                try:
                    async for positions in stream_positions(stages.source, self.every):
                        self._positions = positions
                except Exception:  # the consumer is not created yet, or the server went
                    self._positions = None  # away (which the run reports): no lag shown
            await asyncio.sleep(self.every)

    async def _page(self, request: web.Request) -> web.StreamResponse:
        from aiohttp import web

        return web.Response(text=PAGE, content_type="text/html", charset="utf-8")

    async def _updates(self, request: web.Request) -> web.StreamResponse:
        from reactive_aio.adapters.aiohttp import sse_response

        return await sse_response(request, self.updates(), retry=1.0)

    async def _chart_png(self, request: web.Request) -> web.StreamResponse:
        from aiohttp import web

        if self._chart is None or not self._chart.exists():
            raise web.HTTPNotFound(text="no chart yet: it is drawn once the stream has landed")
        return web.FileResponse(self._chart, headers={"Cache-Control": "no-cache"})


PAGE = """\
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>reactive-aio pipeline</title>
<style>
  :root { color-scheme: light dark; --line: #8884; --muted: #888; --accent: #2a7ae2; }
  body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem auto; max-width: 72rem;
         padding: 0 1rem; }
  h1 { font-size: 1.3rem; margin: 0 0 .3rem; }
  #phase { color: var(--muted); margin: 0 0 1rem; min-height: 1.4em; }
  #state { font-weight: 600; color: var(--accent); }
  table { border-collapse: collapse; width: 100%; margin-bottom: 1rem; }
  th, td { padding: .35rem .6rem; border-bottom: 1px solid var(--line); text-align: right;
           font-variant-numeric: tabular-nums; }
  th:first-child, td:first-child { text-align: left; }
  th { font-weight: 600; color: var(--muted); }
  .bar { height: 4px; background: var(--line); border-radius: 2px; margin-top: 3px; }
  .bar > div { height: 100%; background: var(--accent); border-radius: 2px; width: 0; }
  #lag, #connection { color: var(--muted); }
  #summary[hidden] { display: none; }
  #summary pre { background: #8881; padding: .8rem; overflow-x: auto; }
  #chart { max-width: 100%; border: 1px solid var(--line); }
</style>
</head>
<body>
<h1>reactive-aio pipeline <span id="state"></span></h1>
<p id="phase">connecting…</p>
<table id="stages">
  <thead><tr><th>stage</th><th>rate (rows/s)</th><th>rows</th><th>demand (chunks)</th>
    <th>buffered / bound</th><th>landed</th><th>rejected</th><th>committed</th></tr></thead>
  <tbody></tbody>
</table>
<p id="lag"></p>
<section id="summary" hidden>
  <h2>Summary</h2>
  <pre id="summary-text"></pre>
  <img id="chart" alt="mean delays per carrier" hidden>
</section>
<p id="connection"></p>
<script>
"use strict";
const NONE = "\\u2013";
const STAGES = ["source", "validation", "enrichment", "batching", "sink"];
const COLUMNS = ["rate", "rows", "demand", "buffered", "landed", "rejected", "committed"];
const body = document.querySelector("#stages tbody");
for (const name of STAGES) {
  const row = body.insertRow();
  row.id = name;
  row.insertCell().textContent = name;
  for (const column of COLUMNS) {
    const cell = row.insertCell();
    cell.id = `${name}-${column}`;
    cell.textContent = NONE;
  }
}
const number = (value) => value === null || value === undefined ? NONE
  : Number(value).toLocaleString("en-US", {maximumFractionDigits: 0});
function show(stage) {
  const cell = (column) => document.getElementById(`${stage.name}-${column}`);
  cell("rate").textContent = number(stage.rate);
  cell("rows").textContent = number(stage.rows);
  cell("demand").textContent = stage.demand === null
    ? (stage.name === "sink" ? NONE : "unbounded") : number(stage.demand);
  const buffered = cell("buffered");
  buffered.textContent = stage.bound === null ? number(stage.buffered)
    : `${number(stage.buffered)} / ${number(stage.bound)}`;
  if (stage.bound) {
    const fill = Math.min(100, 100 * stage.buffered / stage.bound);
    buffered.insertAdjacentHTML("beforeend",
      `<div class="bar"><div style="width:${fill}%"></div></div>`);
  }
  cell("landed").textContent = number(stage.landed);
  cell("rejected").textContent = number(stage.rejected);
  cell("committed").textContent = stage.committed === undefined ? NONE
    : `${number(stage.committed)} batch${stage.committed === 1 ? "" : "es"}`
      + (stage.writing ? " (writing)" : "");
}
function summaryText(s) {
  const lines = [
    `read ${number(s.read)}: landed ${number(s.landed)}, rejected ${number(s.rejected)}`
      + (s.skipped ? `, skipped ${number(s.skipped)} landed before` : "")
      + ` (${s.writes} Parquet write${s.writes === 1 ? "" : "s"})`,
    "phases: " + Object.entries(s.phases).map(([n, t]) => `${n} ${t.toFixed(1)} s`).join(", ")
      + `; total ${s.seconds.toFixed(1)} s`
      + (s.records_per_second ? ` (${number(s.records_per_second)} records/s streaming)` : ""),
  ];
  const causes = Object.entries(s.rejections);
  if (causes.length) {
    lines.push("rejected, by field: " + causes.map(([f, n]) => `${f} ${number(n)}`).join(", "));
  }
  if (s.carriers.length) {
    lines.push("", "carrier  airline                        flights  cancelled  dep (min)  arr (min)");
    for (const c of s.carriers) {
      const delay = (v) => (v === null ? "" : v.toFixed(1)).padStart(11);
      lines.push(`${c.carrier.padEnd(9)}${(c.airline || "").slice(0, 29).padEnd(30)}`
        + `${number(c.flights).padStart(8)}${number(c.cancelled).padStart(11)}`
        + `${delay(c.dep_delay_mean)}${delay(c.arr_delay_mean)}`);
    }
  }
  lines.push("", `outputs in ${s.outputs.out}`);
  return lines.join("\\n");
}
let chartShown = false;
const updates = new EventSource("updates");
updates.onopen = () => { document.getElementById("connection").textContent = ""; };
updates.onerror = () => {
  document.getElementById("connection").textContent =
    "not connected: the command has ended, or is not reachable (retrying)";
};
updates.onmessage = (message) => {
  const update = JSON.parse(message.data);
  document.getElementById("phase").textContent = update.phase;
  document.getElementById("state").textContent = update.summary ? "done" : update.state;
  for (const stage of update.stages) show(stage);
  const lag = update.lag;
  document.getElementById("lag").textContent = lag === null ? ""
    : `lag: ${number(lag.pending)} records behind the stream `
      + `(stream at sequence ${number(lag.stream)}, consumer at ${number(lag.consumer)})`;
  if (update.summary) {
    const summary = document.getElementById("summary");
    summary.hidden = false;
    document.getElementById("summary-text").textContent = summaryText(update.summary);
    if (update.chart && !chartShown) {
      const chart = document.getElementById("chart");
      chart.src = `${update.chart}?${Date.now()}`;
      chart.hidden = false;
      chartShown = true;
    }
  }
};
</script>
</body>
</html>
"""
