"""What the pipeline is doing, for whoever watches: one line per phase, then while it streams a
bar on a terminal, or a line every few seconds anywhere else (a CI log, cron, a container).

The bar counts records read; while the sink writes a batch it says ``committing`` (the stream
waits for that write), and from the moment the source ends until the last batch has landed, so a
bar at 100% never looks frozen during the last write. A log line
carries what an operator needs to judge a stream's health: events per second since the last
line, landed, rejected, the sink's outstanding demand and what it holds in its buffer.
"""

from __future__ import annotations

__all__ = ("Progress",)

import asyncio
import sys
import time
from collections.abc import Callable
from typing import Any, Literal, TextIO

import attrs

from reactive_aio.spark import SparkSink

Mode = Literal["bar", "lines", "off"]


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
    streaming: bool = attrs.field(default=False, init=False)
    _source_done: bool = attrs.field(default=False, init=False)
    _started: float = attrs.field(factory=time.monotonic, init=False)
    _task: asyncio.Task[None] | None = attrs.field(default=None, init=False)
    _bar: Any = attrs.field(default=None, init=False)
    _total: int | None = attrs.field(default=None, init=False)
    _read: Callable[[], int] = attrs.field(default=lambda: 0, init=False)
    _rejected: Callable[[], int] = attrs.field(default=lambda: 0, init=False)
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
    ) -> None:
        """Show the stream into *sink* until `close`: *read* and *rejected* count records;
        *total* is how many will be read, when known."""
        self.sink, self.streaming = sink, True
        self._total, self._read, self._rejected = total, read, rejected
        self._shown, self._last = 0, time.monotonic()
        self._source_done = False
        if self.mode == "off":
            return
        if self.mode == "bar":
            from tqdm import tqdm

            self._bar = tqdm(
                total=total, unit="ev", unit_scale=True, file=self.stream, desc="streaming"
            )
        self._task = asyncio.get_running_loop().create_task(self._run())

    def source_done(self) -> None:
        """The source has ended: what the sink still holds is committing now; show that at once
        (the last write may take longer than a tick, or less)."""
        self._source_done = True
        if self._bar is not None:
            self._show()
            self._bar.refresh()

    async def _run(self) -> None:
        interval = 0.25 if self._bar is not None else self.every
        while True:
            await asyncio.sleep(interval)
            self._show()

    def _show(self) -> None:
        """One update: the bar's figures, or a log line with the rate since the last one."""
        assert self.sink is not None
        now, count, stats = time.monotonic(), self._read(), self.sink.statistics()
        unlanded = stats.rows_received - stats.rows_written - stats.rows_skipped
        in_flight = unlanded if self._source_done else unlanded - stats.buffered_rows
        committing = stats.writing or (self._source_done and in_flight > 0)
        state = f"committing {in_flight:,} rows" if committing else "streaming"
        if self._bar is not None:
            self._bar.set_description(state.split(" ")[0], refresh=False)
            self._bar.set_postfix(
                {
                    "landed": stats.rows_written,
                    "rejected": self._rejected(),
                    "demand": stats.outstanding_demand,
                    "buffered": stats.buffered_rows,
                },
                refresh=False,
            )
            self._bar.update(count - self._shown)
        else:
            self.say(
                f"{state}: {(count - self._shown) / (now - self._last):,.0f} events/s, "
                f"read {count:,}{'' if self._total is None else f' of {self._total:,}'}, "
                f"landed {stats.rows_written:,}, "
                f"rejected {self._rejected():,}, demand {stats.outstanding_demand} chunks, "
                f"buffered {stats.buffered_rows:,} rows"
            )
        self._shown, self._last = count, now

    def close(self) -> None:
        """End the streaming display (the phase lines go on)."""
        self.streaming = False
        if self._task is not None:
            self._task.cancel()
            self._task = None
        if self._bar is not None:
            self._show()  # the bar stays on screen: with the final figures, not the last tick's
            self._bar.set_description("streamed", refresh=False)
            self._bar.close()
            self._bar = None
