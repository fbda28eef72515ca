"""``reactive-aio aggregate``: the results of an output that workers landed from a stream.

Workers (``reactive-aio pipeline --worker``) only land; once every one of them has ended,
`aggregate_output` computes ``rejected/``, ``carrier_hourly/``, the summary and ``delays.png``
from what ``events/`` holds committed and what the stream's dead letter holds, and checks that
every record of the stream is in one of them exactly once. It refuses, before Spark starts,
while a worker still runs (the output folder's lock) or while the consumer still owes messages
(a worker was killed and neither restarted nor outlived by another that took its messages
over): the results would be short.
"""

from __future__ import annotations

__all__ = ("NotDrained", "aggregate_output", "ready_to_aggregate")

from pathlib import Path
from typing import Any, TextIO

from reactive_aio.spark import recover_target, to_thread

from ._broker import (
    RecordedSource,
    StreamTally,
    dead_letter_subject,
    parse_nats_url,
    read_dead_letters,
    tally,
)
from ._outputs import hold_output, holds_events
from ._progress import Progress
from ._results import Phases, PipelineResult, stream_check
from ._run import OutputExists, finish, start_spark


class NotDrained(RuntimeError):
    """The consumer the workers share still has messages to deliver or awaiting their
    acknowledgement: some records have not landed yet."""

    def __init__(self, consumer: RecordedSource, counted: StreamTally) -> None:
        self.consumer = consumer
        self.tally = counted
        super().__init__(
            f"the consumer {consumer.durable} of {consumer.stream} has {counted.pending:,} "
            f"messages to deliver and {counted.unacknowledged:,} awaiting acknowledgement"
        )


async def ready_to_aggregate(out: Path, source: str) -> tuple[RecordedSource, StreamTally]:
    """The consumer *out* was landed through and what it and its stream say, once it is
    drained; for a check before Spark starts (the caller holds or probes the folder's lock).

    Raises:
        FileNotFoundError: *out* holds no events.
        OutputExists: *out* was not landed from *source*'s stream.
        NotDrained: the consumer still owes messages.
        LookupError: the consumer is gone from the server.
    """
    servers, name = parse_nats_url(source)
    if not await to_thread(holds_events, out / "events"):
        raise FileNotFoundError(f"{out / 'events'} holds no events: nothing to aggregate")
    consumer = await to_thread(RecordedSource.read, out)
    if consumer is None or consumer.stream != name:
        origin = "a file" if consumer is None else f"the stream {consumer.stream}"
        raise OutputExists(out / "events", f"was landed from {origin}, not from the stream {name}")
    counted = await tally(servers, consumer)
    if counted.pending or counted.unacknowledged:
        raise NotDrained(consumer, counted)
    return consumer, counted


async def aggregate_output(
    *,
    out: Path,
    source: str,
    master: str = "local[*]",
    spark: Any = None,
    chart: bool = True,
    progress: bool | Progress = True,
    start_timeout: float | None = None,
    spark_ui: bool = False,
    log: TextIO | None = None,
) -> PipelineResult:
    """Compute the results of *out*, landed from *source* by workers that have all ended.

    Args:
        out: The output directory the workers landed into.
        source: ``nats://HOST:PORT/STREAM``, the stream they consumed (for the dead letter and
            the consumer's state; the host may be named differently than the workers did).
        master: Spark master, as for `run_pipeline`.
        spark: An existing SparkSession to use instead of creating one from *master*.
        chart: Write ``delays.png``.
        progress: As for `run_pipeline`.
        start_timeout, spark_ui: As for `run_pipeline`.
        log: Where the summary is printed (default: ``sys.stdout`` at the time of the call).

    Returns:
        A `PipelineResult` with ``role="aggregate"``: ``read`` is the records of the stream.

    Raises:
        OutputBusy: a worker (or another run) still uses *out*.
        FileNotFoundError, OutputExists, NotDrained, LookupError: see `ready_to_aggregate`.
        RuntimeError: the counts do not add up (a record lost or landed twice): never expected.
    """
    phases = Phases()
    display = Progress.chosen(progress)
    servers, name = parse_nats_url(source)
    out = await to_thread(out.absolute)
    with await to_thread(hold_output, out, worker=False):
        _, counted = await ready_to_aggregate(out, source)
        display.enter(f"starting Spark ({master}) and reading the dead letter of {name}")
        spark, rejected = await start_spark(
            spark, master, read_dead_letters(servers, name), start_timeout, spark_ui=spark_ui
        )
        # A worker killed between its commit and its renames left a batch half in place;
        # none is alive now (the lock), so what they left can be finished.
        await recover_target(out / "events")
        check = await stream_check(out / "events", rejected, counted, name)
        phases.lap("start")
        return await finish(
            spark,
            out,
            rejected,
            check,
            chart=chart,
            display=display,
            phases=phases,
            log=log,
            read=counted.records,
            writes=0,
            dead_letter=dead_letter_subject(name),
            role="aggregate",
        )
