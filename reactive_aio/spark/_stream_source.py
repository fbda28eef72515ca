"""``from_streaming_query``: a publisher of what a Structured Streaming query produces.

The streaming DataFrame runs as a query with a ``foreachBatch`` sink. Spark calls the sink on
its own thread with each micro-batch; the sink reads the micro-batch with an
`ArrowBatchReader` (the executors push it in Arrow slices of *batch_rows* rows, a credit at a
time) and hands the slices to the event loop one at a time, each only once the subscriber's
demand has room for it. Until then the sink blocks, and with it the executors and the query:
the next micro-batch is not planned while the current one is still being taken, so a slow
subscriber slows the query down instead of piling up data.

Backpressure: full; the query's thread waits for demand (at most *prefetch* batches ahead of
unbounded demand). A micro-batch is never collected whole: however large, the driver holds
the slices within the window, so a source needs no ``maxOffsetsPerTrigger`` for memory's sake.
Errors: the query failing ends the stream with ``on_error`` carrying Spark's exception; a query
that stops by itself (``available_now=True`` once everything is read) completes the stream.
Cancel wakes a waiting sink (which then fails its micro-batch, so a checkpointed query does not
record it as done) and stops the query from a helper thread.
Loop: needs a running event loop at subscribe time; the loop never blocks on Spark.
"""

from __future__ import annotations

__all__ = ("StreamingQueryPublisher", "from_streaming_query")

import collections
import threading
from typing import Any, final

import attrs

from .._core import (
    DrainSubscription,
    Publisher,
    Subscriber,
    end_stream,
    require_not_none,
)
from .._flux import Flux
from ._batches import ArrowBatchReader, SparkJobCancelled
from ._threads import start_thread

_END = object()


@final
@attrs.frozen
class StreamingQueryPublisher(Publisher[Any]):
    """Cold: every subscriber starts its own query over the streaming DataFrame."""

    df: Any
    batch_rows: int = 65_536
    prefetch: int = 2
    trigger_interval: float | None = None
    available_now: bool = False
    checkpoint: str | None = None

    def subscribe(self, subscriber: Subscriber[Any]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        subscription = _QuerySubscription(subscriber, publisher=self)
        if subscription._loop is None:
            subscription.fault = RuntimeError("from_streaming_query needs a running event loop")
        subscription.start()


@final
@attrs.define(eq=False)
class _QuerySubscription(DrainSubscription[Any]):
    publisher: StreamingQueryPublisher = attrs.field(kw_only=True)
    fault: BaseException | None = attrs.field(default=None, init=False)
    query: Any = attrs.field(default=None, init=False)
    """The running ``StreamingQuery``, once started (set by the starting thread)."""
    _queue: collections.deque[Any] = attrs.field(factory=collections.deque, init=False)
    _granted: int = attrs.field(default=0, init=False)
    """Batches the sink may hand over that have not arrived yet (loop side only)."""
    _finished: bool = attrs.field(default=False, init=False)
    _started: bool = attrs.field(default=False, init=False)
    _permits: threading.Semaphore = attrs.field(factory=lambda: threading.Semaphore(0), init=False)
    _cancelled: threading.Event = attrs.field(factory=threading.Event, init=False)
    _lock: threading.Lock = attrs.field(factory=threading.Lock, init=False)
    _reader: ArrowBatchReader | None = attrs.field(default=None, init=False)
    """The reader of the micro-batch being taken, if any (set by Spark's thread)."""

    # -- loop side ----------------------------------------------------------------------

    def _emit(self, limit: int) -> int:
        emitted = self._emit_from(self._queue, limit)
        if self._done:
            return emitted
        if not self._queue and (self.fault is not None or self._finished):
            end_stream(self, self.fault)
            return emitted
        self._grant(self._requested - emitted)
        return emitted

    def _grant(self, outstanding: int) -> None:
        """Let the sink hand over enough batches to cover *outstanding* demand (capped)."""
        wanted = min(outstanding, self.publisher.prefetch) - len(self._queue) - self._granted
        if wanted <= 0 or self._finished:
            return
        self._granted += wanted
        if not self._started:
            self._started = True
            start_thread(self._run, name="reactive_aio-spark-stream")
        self._permits.release(wanted)

    def _deliver(self, item: Any) -> None:
        if self._done:
            return
        if item is _END:
            self._finished = True
        elif isinstance(item, BaseException):
            self.fault = item
            self._finished = True
        else:
            self._granted -= 1
            self._queue.append(item)
        self._drain()

    def _release(self) -> None:
        self._queue.clear()
        self._cancelled.set()
        # However many batches the sink still has to hand over, it must not wait for them.
        self._permits.release(max(1, self.publisher.prefetch) + 1)
        if self._started:
            # py4j calls block: stop from a helper thread, never from the loop.
            start_thread(self._stop, name="reactive_aio-spark-stream-stop")

    def _post(self, item: Any) -> bool:
        """Hand *item* to the loop; False once nobody can receive it any more."""
        loop = self._loop
        assert loop is not None
        try:
            loop.call_soon_threadsafe(self._deliver, item)
        except RuntimeError:  # the loop closed under us
            self._cancelled.set()
            return False
        return True

    # -- Spark side ---------------------------------------------------------------------

    def _run(self) -> None:
        """Start the query, then wait for it to end (a worker thread)."""
        publisher = self.publisher
        try:
            writer = publisher.df.writeStream.foreachBatch(self._on_batch)
            if publisher.available_now:
                writer = writer.trigger(availableNow=True)
            elif publisher.trigger_interval is not None:
                writer = writer.trigger(processingTime=f"{publisher.trigger_interval} seconds")
            if publisher.checkpoint is not None:
                writer = writer.option("checkpointLocation", publisher.checkpoint)
            query = writer.start()
        except Exception as exc:
            self._post(exc)
            return
        with self._lock:
            self.query = query
            cancelled = self._cancelled.is_set()
        if cancelled:  # cancelled while the query was starting: _stop found no query
            query.stop()
            return
        try:
            query.awaitTermination()
            item: Any = _END
        except Exception as exc:
            item = exc
        if not self._cancelled.is_set():
            self._post(item)

    def _on_batch(self, batch_df: Any, epoch_id: int) -> None:
        """The ``foreachBatch`` sink: runs on Spark's thread, blocks until demand takes it all."""
        reader = ArrowBatchReader(batch_df, batch_rows=self.publisher.batch_rows)
        with self._lock:
            cancelled = self._cancelled.is_set()
            self._reader = None if cancelled else reader
        if cancelled:
            raise SparkJobCancelled(f"micro-batch {epoch_id} not taken: the stream was cancelled")
        try:
            with reader:
                for batch in reader:
                    self._permits.acquire()
                    if self._cancelled.is_set() or not self._post(batch):
                        # Failing the micro-batch keeps a checkpointed query from recording
                        # it as done.
                        raise SparkJobCancelled(
                            f"micro-batch {epoch_id} not taken whole: the stream was cancelled"
                        )
        finally:
            with self._lock:
                self._reader = None

    def _stop(self) -> None:
        with self._lock:
            query, reader = self.query, self._reader
        if reader is not None:  # wakes the sink if it waits on the executors
            reader.cancel()
        if query is not None:
            query.stop()


def from_streaming_query(
    df: Any,
    *,
    batch_rows: int = 65_536,
    prefetch: int = 2,
    trigger_interval: float | None = None,
    available_now: bool = False,
    checkpoint: str | None = None,
) -> Flux[Any]:
    """Stream what a streaming DataFrame produces, as a `Flux` of ``pyarrow.RecordBatch``.

    Args:
        df: A streaming DataFrame (``spark.readStream…``); its query starts on first demand.
        batch_rows: At most this many rows per emitted batch (a micro-batch may give several).
        prefetch: Batches handed over ahead of the subscriber when its demand is unbounded.
        trigger_interval: Seconds between micro-batches (default: as soon as possible).
        available_now: Read what is available now in micro-batches, then complete.
        checkpoint: A checkpoint directory, for a query that resumes where it stopped.

    Returns:
        A cold `Flux`; each subscriber runs its own query, stopped when it cancels.

    Backpressure: full (see the module docs).
    """
    if batch_rows <= 0:
        raise ValueError(f"batch_rows must be > 0, got {batch_rows}")
    if prefetch <= 0:
        raise ValueError(f"prefetch must be > 0, got {prefetch}")
    if trigger_interval is not None and trigger_interval <= 0:
        raise ValueError(f"trigger_interval must be > 0, got {trigger_interval}")
    return Flux(
        StreamingQueryPublisher(
            df, batch_rows, prefetch, trigger_interval, available_now, checkpoint
        )
    )
