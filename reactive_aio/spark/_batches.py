"""Spark → Arrow record batches: a blocking, cancellable iterator that streams a DataFrame.

Three ways to get the batches out, fastest first:

``internal`` (classic sessions, Spark ≥ 4.0)
    The executors encode each partition as Arrow IPC batches (``Dataset.toArrowBatchRdd``,
    the same encoder ``toArrow()`` uses) and the driver serves them one partition at a time
    over the local socket protocol of ``toLocalIterator`` (``PythonRDD.toLocalIteratorAndServe``).
    Python only decodes the IPC bytes; nothing is pickled. This leans on JVM methods that are
    public in bytecode but not a documented API, so it is gated on the version and falls back.
``public``
    ``mapInArrow`` packs each group of batches into one binary IPC cell on the executors and
    ``toLocalIterator`` brings the cells over one partition at a time. Documented APIs only,
    but each cell goes through pickle and a Row.
``connect``
    Spark Connect already streams Arrow over gRPC; the client's iterator of tables is used.

Whatever the path, the driver JVM holds at most one partition (plus one prefetched) and
Python at most one batch the caller has not taken, so the whole result is never in memory.
Cancellation tags every job the iterator starts and cancels the tag, then closes the
socket, so a reader blocked in the middle of a partition wakes up at once.
"""

from __future__ import annotations

__all__ = ("ArrowBatchReader", "BatchPath", "SparkJobCancelled", "arrow_schema_of")

import itertools
import socket
import struct
import threading
import uuid
from collections.abc import Callable, Iterator
from io import BufferedIOBase
from typing import Any, Literal, Self

import attrs

from ._session import is_connect

BatchPath = Literal["auto", "internal", "public", "connect"]

_counter = itertools.count()
_INT = struct.Struct("!i")


class SparkJobCancelled(Exception):
    """Raised by a reader's iterator after `ArrowBatchReader.cancel` was called."""


def arrow_schema_of(spark: Any, df: Any) -> Any:
    """Return the ``pyarrow.Schema`` Spark uses when it encodes *df* as Arrow."""
    from pyspark.sql.pandas.types import to_arrow_schema

    large = str(spark.conf.get("spark.sql.execution.arrow.useLargeVarTypes", "false")) == "true"
    return to_arrow_schema(
        df.schema,
        error_on_duplicated_field_names_in_struct=True,
        timezone="UTC",
        prefers_large_types=large,
    )


def _read_int(stream: BufferedIOBase) -> int:
    data = stream.read(4)
    if len(data) < 4:
        raise EOFError("the Spark driver closed the batch socket")
    value: int = _INT.unpack(data)[0]
    return value


def _write_int(value: int, stream: BufferedIOBase) -> None:
    stream.write(_INT.pack(value))
    stream.flush()


def _internal_path_available(df: Any) -> bool:
    import pyspark

    major = int(pyspark.__version__.split(".")[0])
    # The four-argument toArrowBatchRdd and PythonRDD.toLocalIteratorAndServe are the
    # shapes checked against Spark 4.x; older or newer majors take the public path.
    return major == 4 and hasattr(df, "_jdf")


def _ipc_packer(batch_rows: int) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """Build the ``mapInArrow`` function of the public path; a closure so it pickles by value."""

    def pack(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        def flush(group: list[Any]) -> Any:
            sink = pa.BufferOutputStream()
            with pa.ipc.new_stream(sink, group[0].schema) as writer:
                for b in group:
                    writer.write_batch(b)
            return pa.RecordBatch.from_arrays(
                [pa.array([sink.getvalue().to_pybytes()], pa.binary())], ["ipc"]
            )

        group: list[Any] = []
        rows = 0
        for batch in batches:
            offset = 0
            while offset < batch.num_rows:
                take = min(batch_rows - rows, batch.num_rows - offset)
                group.append(batch.slice(offset, take))
                rows += take
                offset += take
                if rows >= batch_rows:
                    yield flush(group)
                    group, rows = [], 0
        if group:
            yield flush(group)

    return pack


@attrs.define(eq=False)
class ArrowBatchReader:
    """A blocking iterator of ``pyarrow.RecordBatch`` over a Spark DataFrame.

    Iterate it from one thread (Spark job tags are per thread); `cancel` may be called from
    any thread and makes the iterating thread raise `SparkJobCancelled` promptly. Use it as a
    context manager, or call `close`, so an abandoned iteration stops its Spark job too.

    Example:
        with ArrowBatchReader(df, batch_rows=50_000) as reader:
            for batch in reader:
                ...
    """

    df: Any
    """The DataFrame to read; it is executed when iteration starts."""
    batch_rows: int = 65_536
    """Upper bound on rows per batch (a partition's last batch is shorter)."""
    path: BatchPath = "auto"
    """Which transfer to use; ``auto`` picks ``connect``, ``internal`` or ``public``."""
    prefetch: bool = True
    """Let Spark compute the next partition while the current one is read."""
    tag: str = attrs.field(factory=lambda: f"reactive_aio-{next(_counter)}-{uuid.uuid4().hex[:8]}")
    """The job tag every job of this reader carries."""
    chosen_path: str = attrs.field(init=False, default="")
    """The path actually taken, once iteration has started."""
    rows_read: int = attrs.field(init=False, default=0)
    """Rows handed out so far."""
    _cancelled: threading.Event = attrs.field(init=False, factory=threading.Event)
    _sock: socket.socket | None = attrs.field(init=False, default=None)
    _lock: threading.Lock = attrs.field(init=False, factory=threading.Lock)

    def __attrs_post_init__(self) -> None:
        if self.batch_rows <= 0:
            raise ValueError(f"batch_rows must be > 0, got {self.batch_rows}")

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[Any]:
        spark = self.df.sparkSession
        path = self.path
        if path == "auto":
            if is_connect(spark):
                path = "connect"
            elif _internal_path_available(self.df):
                path = "internal"
            else:
                path = "public"
        self.chosen_path = path
        source = {
            "internal": self._iter_internal,
            "public": self._iter_public,
            "connect": self._iter_connect,
        }[path]
        for batch in source(spark):
            if self._cancelled.is_set():
                raise SparkJobCancelled(f"Spark job {self.tag} was cancelled")
            self.rows_read += batch.num_rows
            yield batch

    @property
    def cancelled(self) -> bool:
        """Whether `cancel` or `close` was called."""
        return self._cancelled.is_set()

    def cancel(self) -> None:
        """Stop the Spark job(s) of this reader and wake the iterating thread; idempotent."""
        if self._cancelled.is_set():
            return
        self._cancelled.set()
        spark = self.df.sparkSession
        try:
            if is_connect(spark):
                spark.interruptTag(self.tag)
            else:
                spark.sparkContext.cancelJobsWithTag(self.tag)
                spark.interruptTag(self.tag)
        except Exception:  # a stopped session has nothing left to cancel
            pass
        with self._lock:
            sock = self._sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self) -> None:
        """Cancel whatever is still running; safe after a complete iteration."""
        self.cancel()

    # -- the three transfers ------------------------------------------------------------

    def _iter_internal(self, spark: Any) -> Iterator[Any]:
        import pyarrow as pa
        from pyspark.util import _create_local_socket

        sc = spark.sparkContext
        schema = arrow_schema_of(spark, self.df)
        large = str(spark.conf.get("spark.sql.execution.arrow.useLargeVarTypes", "false")) == "true"
        tz = spark.conf.get("spark.sql.session.timeZone")
        jrdd = self.df._jdf.toArrowBatchRdd(self.batch_rows, tz, True, large)
        # The serving thread the JVM starts below inherits this thread's local properties,
        # so the tag must be set before the call and can be dropped right after it.
        sc.addJobTag(self.tag)
        sc.setInterruptOnCancel(True)
        try:
            port, secret, server = sc._jvm.PythonRDD.toLocalIteratorAndServe(jrdd, self.prefetch)
        finally:
            sc.removeJobTag(self.tag)
        sockfile, sock = _create_local_socket((port, secret))
        with self._lock:
            self._sock = sock
        if self._cancelled.is_set():  # cancelled while the socket was being opened
            sock.shutdown(socket.SHUT_RDWR)
        finished = False
        try:
            while True:
                _write_int(1, sockfile)  # ask for the next partition
                status = _read_int(sockfile)
                if status == 0:
                    finished = True
                    return
                if status == -1:
                    server.getResult()  # re-raises the job's failure
                    raise RuntimeError("Spark reported a failure without an error")
                while (size := _read_int(sockfile)) >= 0:
                    yield pa.ipc.read_record_batch(pa.py_buffer(sockfile.read(size)), schema)
        except (OSError, EOFError, ValueError) as exc:
            if self._cancelled.is_set():
                raise SparkJobCancelled(f"Spark job {self.tag} was cancelled") from exc
            raise
        finally:
            try:
                if not finished:
                    self._stop_serving(sockfile, sc)
            finally:
                with self._lock:
                    self._sock = None
                try:
                    sockfile.close()
                except OSError:
                    # After a cancel the socket is shut down: flushing the "stop" request
                    # buffered by _stop_serving fails here. The socket must still be closed,
                    # or it is left to the garbage collector (an "unclosed socket" warning
                    # that surfaces in whichever test runs next).
                    pass
                sock.close()

    def _stop_serving(self, sockfile: BufferedIOBase, sc: Any) -> None:
        """Abandon a partial read: cancel running jobs and tell the server to stop."""
        try:
            sc.cancelJobsWithTag(self.tag)
        except Exception:
            pass
        try:
            _write_int(0, sockfile)
        except (OSError, ValueError):
            pass

    def _iter_public(self, spark: Any) -> Iterator[Any]:
        import pyarrow as pa

        sc = spark.sparkContext
        packed = self.df.mapInArrow(_ipc_packer(self.batch_rows), "ipc binary")
        sc.addJobTag(self.tag)
        sc.setInterruptOnCancel(True)
        spark.addTag(self.tag)
        try:
            rows = packed.toLocalIterator(prefetchPartitions=self.prefetch)
        finally:
            sc.removeJobTag(self.tag)
            spark.removeTag(self.tag)
        try:
            for row in rows:
                # One group per cell, at most batch_rows rows: hand it over as one batch.
                yield from pa.ipc.open_stream(row[0]).read_all().combine_chunks().to_batches()
        finally:
            if not self._cancelled.is_set():
                sc.cancelJobsWithTag(self.tag)

    def _iter_connect(self, spark: Any) -> Iterator[Any]:
        spark.addTag(self.tag)
        try:
            client = spark.client
            plan = self.df._plan
            for item in client.to_table_as_iterator(plan.to_proto(client), plan.observations):
                if hasattr(item, "to_batches"):
                    yield from item.to_batches(max_chunksize=self.batch_rows)
        finally:
            spark.removeTag(self.tag)
