"""What the pipeline is doing, for whoever watches: one line per phase, then while it streams a
bar on a terminal, or a line every few seconds anywhere else (a CI log, cron, a container).

The bar counts records read; while the sink writes a batch it says ``committing`` (the stream
waits for that write), and from the moment the source ends until the last batch has landed, so a
bar at 100% never looks frozen during the last write. A log line
carries what an operator needs to judge a stream's health: events per second since the last
line, landed, rejected, what the sink requested and has not received yet (its demand, in
chunks: the records travel in chunks of up to 8,192) and the rows it holds for its next batch.
`follow` shows any other stream the same way (``reactive-aio publish``'s, for one).
"""

from __future__ import annotations

__all__ = ("Figures", "Progress", "sink_figures")

import asyncio
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, TextIO, final

import attrs

if TYPE_CHECKING:
    from reactive_aio.spark import SinkStatistics, SparkSink

    from ._stages import Stages

Mode = Literal["bar", "lines", "off"]


@final
@attrs.frozen
class Figures:
    """What a streaming display shows besides the count: the *state* (its first word heads the
    bar) and named *values*, each with its unit."""

    state: str
    values: tuple[tuple[str, str], ...]
    verb: str = "read"
    """What the count is, in the lines: ``read 1,000 of 2,000``."""


def sink_figures(stats: SinkStatistics, rejected: int, source_done: bool) -> Figures:
    """The pipeline's figures: whether the sink is committing (while it writes, and from the
    source's end until the last batch landed), what landed and was rejected, what the sink
    asked for and holds."""
    unlanded = stats.rows_received - stats.rows_written - stats.rows_skipped
    in_flight = unlanded if source_done else unlanded - stats.buffered_rows
    committing = stats.writing or (source_done and in_flight > 0)
    return Figures(
        f"committing {in_flight:,} rows" if committing else "streaming",
        (
            ("landed", f"{stats.rows_written:,}"),
            ("rejected", f"{rejected:,}"),
            ("requested", f"{stats.outstanding_demand:,} chunks"),
            ("buffered", f"{stats.buffered_rows:,} rows"),
        ),
    )


@attrs.define(eq=False)
class Progress:
    """Phase lines and a streaming display on *stream*; see the module docs.

    *mode* ``"bar"`` draws a tqdm bar, ``"lines"`` prints a line every *every* seconds,
    ``"off"`` prints nothing (the current phase is still kept, for error messages).
    """

    mode: Mode = "lines"
    stream: TextIO = attrs.field(factory=lambda: sys.stderr)
    every: float = 5.0
    copy_to: TextIO | None = None
    """Where the phase and log lines also go (the run's log file), without the bar."""
    phase: str = ""
    """The phase running now, as a verb phrase: ``"streaming 336,776 records into …"``."""
    sink: SparkSink | None = attrs.field(default=None, init=False)
    """The sink of the stream, once streaming started (it tells what has landed)."""
    stages: Stages | None = attrs.field(default=None, init=False)
    """The stages of the stream, once streaming started (the live page shows them)."""
    streaming: bool = attrs.field(default=False, init=False)
    _source_done: bool = attrs.field(default=False, init=False)
    _started: float = attrs.field(factory=time.monotonic, init=False)
    _task: asyncio.Task[None] | None = attrs.field(default=None, init=False)
    _bar: Any = attrs.field(default=None, init=False)
    _total: int | None = attrs.field(default=None, init=False)
    _count: Callable[[], int] = attrs.field(default=lambda: 0, init=False)
    _figures: Callable[[bool], Figures] = attrs.field(
        default=lambda source_done: Figures("streaming", ()), init=False
    )
    _unit: tuple[str, str] = attrs.field(default=("ev", "events"), init=False)
    _finished: str = attrs.field(default="streamed", init=False)
    _shown: int = attrs.field(default=0, init=False)
    _last: float = attrs.field(factory=time.monotonic, init=False)

    @classmethod
    def auto(cls, stream: TextIO | None = None, every: float = 5.0) -> Progress:
        """A bar when *stream* (default: stderr) is a terminal, else log lines."""
        stream = sys.stderr if stream is None else stream
        return cls("bar" if stream.isatty() else "lines", stream, every)

    @classmethod
    def chosen(cls, progress: bool | Progress) -> Progress:
        """*progress* itself, or for ``True`` `auto`, for ``False`` one that prints nothing."""
        if isinstance(progress, Progress):
            return progress
        return cls.auto() if progress else cls("off")

    def say(self, text: str) -> None:
        """One line, stamped with the seconds since the run started."""
        line = f"[{time.monotonic() - self._started:7.1f} s] {text}"
        if self.copy_to is not None:
            print(line, file=self.copy_to)
        if self.mode != "off":
            print(line, file=self.stream)
            self.stream.flush()

    def enter(self, phase: str) -> None:
        self.phase = phase
        self.say(phase)

    def watch(
        self,
        sink: SparkSink,
        *,
        total: int | None,
        read: Callable[[], int],
        rejected: Callable[[], int],
        stages: Stages | None = None,
    ) -> None:
        """Show the stream into *sink* until `close`: *read* and *rejected* count records;
        *total* is how many will be read, when known; *stages* are kept for whoever else
        watches (`stages`)."""
        self.sink, self.stages = sink, stages
        self.follow(
            total=total,
            count=read,
            figures=lambda source_done: sink_figures(sink.statistics(), rejected(), source_done),
        )

    def follow(
        self,
        *,
        total: int | None,
        count: Callable[[], int],
        figures: Callable[[bool], Figures],
        unit: tuple[str, str] = ("ev", "events"),
        finished: str = "streamed",
    ) -> None:
        """Show a stream until `close`: *count* says how far it is (of *total*, when known),
        *figures* the rest (told whether the source has ended); *unit* is the counted thing,
        short (the bar's) and long (the lines'); *finished* heads the bar once it closed."""
        self.streaming = True
        self._total, self._count, self._figures, self._unit = total, count, figures, unit
        self._finished = finished
        self._shown, self._last = 0, time.monotonic()
        self._source_done = False
        if self.mode == "off":
            return
        if self.mode == "bar":
            from tqdm import tqdm

            self._bar = tqdm(
                total=total, unit=unit[0], unit_scale=True, file=self.stream, desc="streaming"
            )
        self._task = asyncio.get_running_loop().create_task(self._run())

    def source_done(self) -> None:
        """The source has ended: what the sink still holds is committing now; show that at once
        (the last write may take longer than a tick, or less)."""
        self._source_done = True
        if self._bar is not None:
            self._show()
            self._bar.refresh()

    def figures(self) -> Figures:
        """The stream's figures now (its state first), as the display shows them."""
        return self._figures(self._source_done)

    async def _run(self) -> None:
        interval = 0.25 if self._bar is not None else self.every
        while True:
            await asyncio.sleep(interval)
            self._show()

    def _show(self) -> None:
        """One update: the bar's figures, or a log line with the rate since the last one."""
        now, count, figures = time.monotonic(), self._count(), self.figures()
        if self._bar is not None:
            self._bar.set_description(figures.state.split(" ")[0], refresh=False)
            self._bar.set_postfix(dict(figures.values), refresh=False)
            self._bar.update(count - self._shown)
        else:
            of = "" if self._total is None else f" of {self._total:,}"
            rate = (count - self._shown) / max(now - self._last, 1e-6)
            self.say(
                f"{figures.state}: {rate:,.0f} "
                f"{self._unit[1]}/s, {figures.verb} {count:,}{of}"
                + "".join(f", {name} {value}" for name, value in figures.values)
            )
        self._shown, self._last = count, now

    def close(self) -> None:
        """End the streaming display with its final figures (the phase lines go on)."""
        self.streaming = False
        if self._task is not None:
            self._task.cancel()
            self._task = None
            if self._bar is None:
                self._show()  # a log ends with where the stream ended, however short it was
        if self._bar is not None:
            self._show()  # the bar stays on screen: with the final figures, not the last tick's
            self._bar.set_description(self._finished, refresh=False)
            self._bar.close()
            self._bar = None
