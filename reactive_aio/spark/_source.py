"""``from_dataframe``: a publisher of a Spark DataFrame's rows as Arrow record batches (or rows).

Backpressure: full; one worker thread per subscription pulls the next batch from Spark only
while the subscriber has unfulfilled demand (at most *prefetch* batches ahead when demand is
unbounded). With the default transfer on a classic session the executors push each batch as
they compute it, a credit at a time (see `ArrowBatchReader`), so neither a partition nor the
result is ever held whole in the driver.
Errors: a failing Spark job ends the stream with ``on_error`` carrying Spark's exception.
Cancel stops the running Spark job (job tags) and wakes the worker at once.
Loop: needs a running event loop at subscribe time; batches are handed to it with
``call_soon_threadsafe`` and the loop never blocks on Spark.
"""

from __future__ import annotations

__all__ = ("DataFramePublisher", "from_dataframe")

import collections
import threading
from collections.abc import Generator
from typing import Any, Generic, Literal, TypeVar, final

import attrs

from .._core import (
    DrainSubscription,
    Publisher,
    Subscriber,
    end_stream,
    require_not_none,
)
from .._flux import Flux
from ._batches import ArrowBatchReader, BatchPath
from ._threads import start_thread

T = TypeVar("T")

_END = object()


@final
@attrs.frozen
class DataFramePublisher(Publisher[T], Generic[T]):
    """Cold: every subscriber runs the DataFrame's query afresh."""

    df: Any
    batch_rows: int = 65_536
    as_: Literal["arrow", "rows"] = "arrow"
    prefetch: int = 2
    path: BatchPath = "auto"

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        reader = ArrowBatchReader(self.df, batch_rows=self.batch_rows, path=self.path)
        per_permit = self.batch_rows if self.as_ == "rows" else 1
        subscription = _DataFrameSubscription[T](
            subscriber, reader=reader, per_permit=per_permit, cap=self.prefetch * per_permit
        )
        if subscription._loop is None:
            subscription.fault = RuntimeError("from_dataframe needs a running event loop")
        subscription.start()


@final
@attrs.define(eq=False)
class _DataFrameSubscription(DrainSubscription[T]):
    reader: ArrowBatchReader = attrs.field(kw_only=True)
    per_permit: int = attrs.field(kw_only=True)
    """Items one fetched batch is expected to yield: 1 for batches, ``batch_rows`` for rows."""
    cap: int = attrs.field(kw_only=True)
    """How many items may be fetched ahead of unbounded demand."""
    fault: BaseException | None = attrs.field(default=None, init=False)
    _queue: collections.deque[Any] = attrs.field(factory=collections.deque, init=False)
    _granted: int = attrs.field(default=0, init=False)
    """Batches the worker may fetch that have not arrived yet (loop side only)."""
    _permits: threading.Semaphore = attrs.field(factory=lambda: threading.Semaphore(0), init=False)
    _worker: threading.Thread | None = attrs.field(default=None, init=False)
    _finished: bool = attrs.field(default=False, init=False)

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
        """Let the worker fetch enough batches to cover *outstanding* demand (capped)."""
        wanted = min(outstanding, self.cap) - len(self._queue) - self._granted * self.per_permit
        if wanted <= 0 or self._finished:
            return
        batches = -(-wanted // self.per_permit)
        self._granted += batches
        if self._worker is None:
            self._worker = start_thread(self._work, name=f"reactive_aio-spark-{self.reader.tag}")
        self._permits.release(batches)

    def _deliver(self, item: Any) -> None:
        """A batch (or the end marker, or an error) arrived from the worker."""
        if self._done:
            return
        self._granted = max(0, self._granted - 1)
        if item is _END:
            self._finished = True
        elif isinstance(item, BaseException):
            self.fault = item
            self._finished = True
        elif self.per_permit == 1:
            self._queue.append(item)
        else:
            self._queue.extend(item)
        self._drain()

    def _release(self) -> None:
        self._queue.clear()
        if self._worker is not None and not self._finished:
            # py4j calls block: cancel from a helper thread, never from the loop.
            start_thread(self.reader.cancel, name=f"reactive_aio-cancel-{self.reader.tag}")
        self._permits.release()  # a worker waiting for a permit wakes up and sees the cancel

    # -- worker side --------------------------------------------------------------------

    def _work(self) -> None:
        loop = self._loop
        assert loop is not None
        rows = self.per_permit != 1
        batches: Generator[Any, None, None] = iter(self.reader)
        try:
            while True:
                self._permits.acquire()
                if self.reader.cancelled or self._done:
                    return
                try:
                    batch = next(batches)
                except StopIteration:
                    item: Any = _END
                else:
                    item = batch.to_pylist() if rows else batch
                try:
                    loop.call_soon_threadsafe(self._deliver, item)
                except RuntimeError:  # the loop closed under us: nobody is listening
                    self.reader.cancel()
                    return
                if item is _END:
                    return
        except Exception as exc:
            if not self.reader.cancelled:
                try:
                    loop.call_soon_threadsafe(self._deliver, exc)
                except RuntimeError:
                    pass
        finally:
            self.reader.close()
            # The transfer closes its sockets when its generator ends: now, not when collected.
            batches.close()


def from_dataframe(
    df: Any,
    *,
    batch_rows: int = 65_536,
    as_: Literal["arrow", "rows"] = "arrow",
    prefetch: int = 2,
    path: BatchPath = "auto",
) -> Flux[Any]:
    """Stream a Spark DataFrame as a `Flux` of ``pyarrow.RecordBatch`` (or of row dicts).

    Args:
        df: Any Spark DataFrame (classic or Connect); its query runs when subscribed.
        batch_rows: At most this many rows per batch.
        as_: ``"arrow"`` emits record batches; ``"rows"`` emits one ``dict`` per row (the
            batches are converted in the worker thread, not on the event loop).
        prefetch: Batches fetched ahead of the subscriber when its demand is unbounded.
        path: How batches leave Spark; see `ArrowBatchReader` (``auto``: ``stream`` on a
            classic session, ``connect`` on a Connect one; ``partition`` trades the bounded
            driver memory and early first batch of ``stream`` for less CPU).

    Returns:
        A cold `Flux`; each subscriber runs the query in its own worker thread.

    Backpressure: full (see the module docs). Cancel stops the Spark job promptly.
    """
    if batch_rows <= 0:
        raise ValueError(f"batch_rows must be > 0, got {batch_rows}")
    if prefetch <= 0:
        raise ValueError(f"prefetch must be > 0, got {prefetch}")
    if as_ not in ("arrow", "rows"):
        raise ValueError(f"as_ must be 'arrow' or 'rows', got {as_!r}")
    return Flux(DataFramePublisher(df, batch_rows, as_, prefetch, path))
