"""``spark_map``: run a DataFrame → DataFrame function on Spark for each micro-batch of a stream.

Backpressure: bounded; one output item (a ``pyarrow.Table``: *fn* applied to one micro-batch
of at most *batch_rows* input rows) per unit of downstream demand. Input is requested only
for micro-batches that downstream demand can take, and never more than a window of two
micro-batches ahead of what was delivered (one in its Spark job, one being gathered), however
large the demand: memory stays flat under unbounded demand. One Spark job runs at a time, and
results are emitted in input order.
Errors: an upstream error is passed on after the results already computed; *fn* or its Spark
job failing cancels upstream and ends the stream with that error.
Loop: needs a running event loop at subscribe time; Spark runs in a worker thread per job.
"""

from __future__ import annotations

__all__ = ("SparkMapPublisher", "spark_map")

import asyncio
import collections
import math
from collections.abc import Callable
from typing import Any, Generic, TypeVar, final

import attrs

from .._core import (
    DemandWindow,
    DrainSubscription,
    Publisher,
    Subscriber,
    Subscription,
    require_not_none,
)
from .._flux import Flux
from ._tables import rows_in, to_table
from ._threads import start_thread

T = TypeVar("T")

_WINDOW = 2
"""Micro-batches held at most: gathering, waiting for their job, running, or not yet emitted."""


@final
@attrs.frozen
class SparkMapPublisher(Publisher[Any], Generic[T]):
    """What `spark_map` applies to a flux; cold like its source."""

    source: Publisher[T]
    fn: Callable[[Any], Any]
    spark: Any
    batch_rows: int = 100_000
    max_latency: float = 1.0
    schema: Any = None

    def subscribe(self, subscriber: Subscriber[Any]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        subscription = _SparkMapSubscription(subscriber, publisher=self)
        subscription.start()
        if not subscription.done:
            self.source.subscribe(_Inner(subscription))


@final
@attrs.define(eq=False)
class _Inner(Subscriber[Any]):
    """The upstream side; forwards to the subscription that owns the state."""

    _owner: _SparkMapSubscription

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "2.13", "on_subscribe's subscription")
        self._owner.upstream_subscribed(subscription)

    def on_next(self, item: Any) -> None:
        if item is None:
            require_not_none(item, "2.13", "on_next's item")
        self._owner.upstream_item(item)

    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        self._owner.upstream_ended(error)

    def on_complete(self) -> None:
        self._owner.upstream_ended(None)


@final
@attrs.define(eq=False)
class _SparkMapSubscription(DrainSubscription[Any]):
    publisher: SparkMapPublisher[Any] = attrs.field(kw_only=True)
    _demand: DemandWindow = attrs.field(factory=DemandWindow, init=False)
    """Upstream and what it was asked for and has not delivered yet."""
    _buffer: list[Any] = attrs.field(factory=list, init=False)
    _buffered_rows: int = attrs.field(default=0, init=False)
    _rows_per_item: float = attrs.field(default=0.0, init=False)
    _items_seen: int = attrs.field(default=0, init=False)
    _pending: collections.deque[list[Any]] = attrs.field(factory=collections.deque, init=False)
    _results: collections.deque[Any] = attrs.field(factory=collections.deque, init=False)
    _running: bool = attrs.field(default=False, init=False)
    _timer: asyncio.TimerHandle | None = attrs.field(default=None, init=False)
    _upstream_done: bool = attrs.field(default=False, init=False)
    _upstream_error: BaseException | None = attrs.field(default=None, init=False)
    _job_error: BaseException | None = attrs.field(default=None, init=False)

    # -- downstream (the drain) ---------------------------------------------------------

    def _emit(self, limit: int) -> int:
        if self._job_error is not None:
            self._cancel_upstream()
            self._error(self._job_error)
            return 0
        emitted = self._emit_from(self._results, limit)
        if self._done:
            return emitted
        idle = not (self._results or self._running or self._pending or self._buffer)
        if self._upstream_done and idle:
            if self._upstream_error is not None:
                self._error(self._upstream_error)
            else:
                self._complete()
            return emitted
        self._pump(self._requested - emitted)
        return emitted

    def _pump(self, demand: int) -> None:
        """Start a job if one is waiting; ask upstream for the next micro-batch if wanted."""
        self._start_job()
        in_flight = len(self._results) + len(self._pending) + (1 if self._running else 0)
        # Room for the micro-batch being gathered: what demand can take, within the window.
        if min(demand, _WINDOW) - in_flight <= 0 or self._upstream_done:
            return
        if self._items_seen == 0:
            # Until the first item tells how many rows an item carries, one item is all that
            # can be asked for without risking a request far beyond one micro-batch.
            wanted = 1
        else:
            per_item = max(self._rows_per_item, 1.0)
            wanted = math.ceil(max(self.publisher.batch_rows - self._buffered_rows, 1) / per_item)
        self._demand.top_up(wanted)

    def _release(self) -> None:
        self._cancel_upstream()
        self._buffer.clear()
        self._pending.clear()
        self._results.clear()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _cancel_upstream(self) -> None:
        upstream, self._demand.upstream = self._demand.upstream, None
        if upstream is not None and not self._upstream_done:
            upstream.cancel()

    # -- upstream -----------------------------------------------------------------------

    def upstream_subscribed(self, subscription: Subscription) -> None:
        if self._demand.upstream is not None or self._done:
            subscription.cancel()  # rule 2.5, or we were cancelled meanwhile
            return
        self._demand.upstream = subscription
        self._drain()

    def upstream_item(self, item: Any) -> None:
        if self._done or self._upstream_done:
            return
        rows = rows_in(item)
        self._demand.received()
        self._items_seen += 1
        self._rows_per_item += (rows - self._rows_per_item) / min(self._items_seen, 64)
        if not self._buffer and self._loop is not None and self.publisher.max_latency > 0:
            self._timer = self._loop.call_later(self.publisher.max_latency, self._close_batch)
        self._buffer.append(item)
        self._buffered_rows += rows
        if self._buffered_rows >= self.publisher.batch_rows:
            self._close_batch()
        else:
            self._drain()

    def upstream_ended(self, error: BaseException | None) -> None:
        if self._upstream_done:
            return
        self._upstream_done = True
        self._upstream_error = error
        self._demand.upstream = None
        self._close_batch()
        self._drain()

    def _close_batch(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._buffer:
            self._pending.append(self._buffer)
            self._buffer, self._buffered_rows = [], 0
        self._drain()

    # -- the Spark job ------------------------------------------------------------------

    def _start_job(self) -> None:
        if self._running or not self._pending or self._done:
            return
        items = self._pending.popleft()
        self._running = True
        start_thread(self._run_job, items, name="reactive_aio-spark_map")

    def _run_job(self, items: list[Any]) -> None:
        publisher = self.publisher
        outcome: Any
        try:
            table = to_table(items, publisher.schema)
            result = publisher.fn(publisher.spark.createDataFrame(table))
            outcome = result.toArrow()
        except Exception as exc:
            outcome = exc
        loop = self._loop
        assert loop is not None
        try:
            loop.call_soon_threadsafe(self._job_done, outcome)
        except RuntimeError:  # loop closed: nobody is waiting for this result
            pass

    def _job_done(self, outcome: Any) -> None:
        self._running = False
        if self._done:
            return
        if isinstance(outcome, Exception):
            self._job_error = outcome
        else:
            self._results.append(outcome)
        self._drain()


def spark_map(
    fn: Callable[[Any], Any],
    *,
    spark: Any,
    batch_rows: int = 100_000,
    max_latency: float = 1.0,
    schema: Any = None,
) -> Callable[[Flux[Any]], Flux[Any]]:
    """An operator for ``flux.pipe(...)``: *fn* (DataFrame → DataFrame) runs on Spark per micro-batch.

    Args:
        fn: Receives a DataFrame of one micro-batch, returns the DataFrame to emit.
        spark: The SparkSession to run on.
        batch_rows: Input rows per micro-batch.
        max_latency: Seconds after which a partial micro-batch is processed anyway.
        schema: ``pyarrow.Schema`` for converting row dicts (Arrow items need none).

    Returns:
        A function from a `Flux` of Arrow batches/tables or row dicts to a `Flux` of
        ``pyarrow.Table`` results, one per micro-batch, in order.

    Backpressure: bounded (see the module docs).
    """
    if batch_rows <= 0:
        raise ValueError(f"batch_rows must be > 0, got {batch_rows}")

    def apply(flux: Flux[Any]) -> Flux[Any]:
        return Flux(SparkMapPublisher(flux, fn, spark, batch_rows, max_latency, schema))

    return apply
