"""Spark → Arrow record batches: a blocking, cancellable iterator that streams a DataFrame.

Three transfers:

``stream`` (classic sessions, the default there)
    The executors push each partition to the reader as it is computed, a credit at a time.
    They encode it as for ``toArrow()`` (``Dataset.toArrowBatchRdd``: Arrow IPC record batch
    messages of at most *batch_rows* rows), and a Python function in each task relays those
    messages untouched to a socket the reader listens on (token-checked, on the driver's
    address), sending one only after the reader granted a credit for it; the relayed RDD
    itself has no elements. One Spark job runs per partition, in order, through the
    job-at-a-time protocol of ``toLocalIterator``, with the next partition's job started
    ahead (its task takes up to *read_ahead_bytes* in its own worker, then waits). So the
    first batch leaves the executor as soon as it is encoded, no partition is ever collected
    whole, the driver holds only the batches it granted credits for, and the executors do
    no Arrow work beyond Spark's own encoder. A task attempt that fails mid-partition is
    retried by Spark; the retry is told how many batches of the partition were already
    delivered and skips them (as Spark's own retries, this relies on the partition being
    recomputed in the same order).
``partition`` (classic sessions)
    The executors encode each partition as Arrow IPC (``Dataset.toArrowBatchRdd``, the encoder
    ``toArrow()`` uses) and the driver serves whole partitions one at a time over the same
    job-at-a-time protocol. No Python worker is involved, so it costs the least CPU, but the
    driver holds a whole partition (plus one prefetched) and the first batch waits for it.
``connect``
    Spark Connect streams Arrow over gRPC; the client's iterator of tables is used (the
    Connect server collects a partition at a time on its side, as Connect does).

The classic transfers lean on JVM methods that are public in bytecode but not a documented
API (``toArrowBatchRdd``, ``PythonRDD.toLocalIteratorAndServe``). Cancellation tags every job
the iterator starts and cancels the tag, then shuts the sockets down, so a reader blocked in
the middle of a partition wakes up at once.
"""

from __future__ import annotations

__all__ = ("ArrowBatchReader", "BatchPath", "SparkJobCancelled")

import hmac
import itertools
import secrets
import selectors
import socket
import struct
import threading
import uuid
from collections.abc import Callable, Generator, Iterable, Iterator
from io import BufferedIOBase
from typing import Any, Literal, Self

import attrs

from ._session import is_connect

BatchPath = Literal["auto", "stream", "partition", "connect"]

_counter = itertools.count()
_INT = struct.Struct("!i")
_LONG = struct.Struct("!q")
_HELLO = struct.Struct("!32sii")
"""A task's greeting: the reader's token, its partition and its attempt number."""
_CREDITS_AHEAD = 2
"""Batches a task may send before the reader asks for them: it computes the next meanwhile."""


class SparkJobCancelled(Exception):
    """Raised by a reader's iterator after `ArrowBatchReader.cancel` was called."""


def _read_int(stream: BufferedIOBase) -> int:
    data = stream.read(4)
    if len(data) < 4:
        raise EOFError("the Spark driver closed the job socket")
    value: int = _INT.unpack(data)[0]
    return value


def _write_int(value: int, stream: BufferedIOBase) -> None:
    stream.write(_INT.pack(value))
    stream.flush()


def _partition_relay(
    host: str, port: int, token: str, read_ahead_bytes: int
) -> Callable[[Iterable[bytes]], Iterator[Any]]:
    """Build the task function that relays a partition's Arrow batches to the reader.

    Its input is the partition as Spark's own Arrow encoder produced it (one IPC record batch
    message per element); it forwards each message untouched, one per credit. A closure that
    imports only the standard library, so it pickles by value, runs on executors that do not
    have this package installed and starts without importing pyarrow. A first attempt takes
    up to *read_ahead_bytes* of batches before its turn comes (so the next partition's work
    overlaps the reading of the current one); a retry first learns how many batches to skip.
    """

    def relay(batches: Iterable[bytes]) -> Iterator[Any]:
        import collections
        import itertools
        import select
        import socket
        import struct

        from pyspark import TaskContext

        context = TaskContext.get()
        assert context is not None  # always set in a task
        attempt = context.attemptNumber()
        hello = struct.pack("!32sii", token.encode(), context.partitionId(), attempt)
        with socket.create_connection((host, port)) as sock:
            sock.sendall(hello)
            received = bytearray()  # the reader's answer (8 bytes), then one byte per credit

            def listen(block: bool) -> None:
                if block or select.select([sock], [], [], 0)[0]:
                    data = sock.recv(4096)
                    if not data:
                        raise ConnectionError("the reader closed the connection")
                    received.extend(data)

            source = iter(batches)
            if attempt > 0:  # a retry: learn what to skip before computing anything
                while len(received) < 8:
                    listen(block=True)
                source = itertools.islice(source, struct.unpack("!q", received[:8])[0], None)
            ready: collections.deque[bytes] = collections.deque()
            buffered = 0
            exhausted = False
            while not (exhausted and not ready):
                credits = len(received) - 8
                if ready and credits > 0:
                    body = ready.popleft()
                    buffered -= len(body)
                    sock.sendall(struct.pack("!q", len(body)))
                    sock.sendall(body)
                    del received[8]
                elif not exhausted and (not ready or buffered < read_ahead_bytes):
                    body = next(source, b"")
                    if body:
                        ready.append(body)
                        buffered += len(body)
                    else:
                        exhausted = True
                    listen(block=False)
                else:
                    listen(block=True)
            while len(received) < 8:  # an empty partition still waits for its turn
                listen(block=True)
            sock.sendall(struct.pack("!q", 0))  # the end of the partition; needs no credit
            # Closing with unread credits would reset the connection and could discard the
            # end marker on its way: wait for the reader to close first.
            sock.shutdown(socket.SHUT_WR)
            while sock.recv(4096):
                pass
        yield from ()

    return relay


@attrs.define(eq=False)
class _TaskConnection:
    """The reader's end of one task attempt's connection."""

    sock: socket.socket
    stream: BufferedIOBase
    answered: bool = False
    credits: int = 0
    """Credits granted and not yet used by a batch."""

    def answer(self, skip: int) -> None:
        self.stream.write(_LONG.pack(skip))
        self.stream.flush()
        self.answered = True

    def read_batch(self, schema_reader: Callable[[bytes], Any]) -> Any:
        """Return the next batch, None at the partition's end; EOFError if the task died."""
        if self.credits < _CREDITS_AHEAD:
            self.stream.write(b"\x01" * (_CREDITS_AHEAD - self.credits))
            self.stream.flush()
            self.credits = _CREDITS_AHEAD
        head = self.stream.read(8)
        if len(head) < 8:
            raise EOFError
        (size,) = _LONG.unpack(head)
        if size == 0:
            return None
        body = self.stream.read(size)
        if len(body) < size:
            raise EOFError
        self.credits -= 1
        return schema_reader(body)

    def close(self) -> None:
        _close(self.stream, self.sock)


@attrs.define(eq=False)
class _PartitionJobs:
    """One Spark job per partition, in order, on request: the serving protocol of
    ``toLocalIterator`` (``PythonRDD.toLocalIteratorAndServe``), whose next job starts ahead."""

    stream: BufferedIOBase
    sock: socket.socket
    server: Any
    finished: bool = False
    """Whether the last partition was served (nothing is left to cancel)."""

    def request(self) -> None:
        """Ask for the next partition: its job runs (and, with prefetch, the one after it)."""
        _write_int(1, self.stream)

    def status(self) -> int:
        """Wait for the requested partition's job: 1 done (its rows follow), 0 no more."""
        status = _read_int(self.stream)
        if status == -1:
            self.server.getResult()  # re-raises the job's failure
            raise RuntimeError("Spark reported a failure without an error")
        if status == 0:
            self.finished = True
        return status

    def rows(self) -> Iterator[bytes]:
        """The requested partition's collected elements, after a status of 1."""
        while (size := _read_int(self.stream)) >= 0:
            yield self.stream.read(size)

    def stop(self, sc: Any, tag: str) -> None:
        """Cancel what still runs and tell the server to stop, unless everything was served."""
        if not self.finished:
            try:
                sc.cancelJobsWithTag(tag)
            except Exception:
                pass
            try:
                _write_int(0, self.stream)
            except (OSError, ValueError):
                pass
        _close(self.stream, self.sock)


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
    """Which transfer to use (see the module); ``auto`` is ``stream`` on a classic session and
    ``connect`` on a Connect one."""
    prefetch: bool = True
    """Start the next partition's job while the current one is read (classic sessions)."""
    read_ahead_bytes: int = 64 << 20
    """Arrow bytes the next partition's task may compute before its turn (``stream``): held
    in that executor's Python worker, never in the driver."""
    tag: str = attrs.field(factory=lambda: f"reactive_aio-{next(_counter)}-{uuid.uuid4().hex[:8]}")
    """The job tag every job of this reader carries."""
    chosen_path: str = attrs.field(init=False, default="")
    """The path actually taken, once iteration has started."""
    rows_read: int = attrs.field(init=False, default=0)
    """Rows handed out so far."""
    _cancelled: threading.Event = attrs.field(init=False, factory=threading.Event)
    _sockets: set[socket.socket] = attrs.field(init=False, factory=set)
    _lock: threading.Lock = attrs.field(init=False, factory=threading.Lock)

    def __attrs_post_init__(self) -> None:
        if self.batch_rows <= 0:
            raise ValueError(f"batch_rows must be > 0, got {self.batch_rows}")

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __iter__(self) -> Generator[Any, None, None]:
        spark = self.df.sparkSession
        path = self.path
        if path == "auto":
            path = "connect" if is_connect(spark) else "stream"
        self.chosen_path = path
        source = {
            "stream": self._iter_stream,
            "partition": self._iter_partition,
            "connect": self._iter_connect,
        }[path]
        try:
            for batch in source(spark):
                if self._cancelled.is_set():
                    raise SparkJobCancelled(f"Spark job {self.tag} was cancelled")
                self.rows_read += batch.num_rows
                yield batch
        except (OSError, EOFError, ValueError) as exc:
            if self._cancelled.is_set():
                raise SparkJobCancelled(f"Spark job {self.tag} was cancelled") from exc
            raise

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
        except Exception:  # a stopped session has nothing left to cancel
            pass
        with self._lock:
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)

    def close(self) -> None:
        """Cancel whatever is still running; safe after a complete iteration."""
        self.cancel()

    def _watch(self, sock: socket.socket) -> None:
        """Let `cancel` shut *sock* down (waking a blocked read); at once if it already ran."""
        with self._lock:
            self._sockets.add(sock)
        if self._cancelled.is_set():
            _shut(sock)

    def _unwatch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.discard(sock)

    def _partition_jobs(self, sc: Any, jrdd: Any) -> _PartitionJobs:
        from pyspark.util import _create_local_socket

        # The serving thread the JVM starts below inherits this thread's local properties,
        # so the tag must be set before the call and can be dropped right after it.
        sc.addJobTag(self.tag)
        sc.setInterruptOnCancel(True)
        try:
            port, secret, server = sc._jvm.PythonRDD.toLocalIteratorAndServe(jrdd, self.prefetch)
        finally:
            sc.removeJobTag(self.tag)
        stream, sock = _create_local_socket((port, secret))
        self._watch(sock)
        return _PartitionJobs(stream, sock, server)

    # -- the transfers --------------------------------------------------------------------

    def _iter_stream(self, spark: Any) -> Iterator[Any]:
        import pyarrow as pa
        from pyspark import RDD
        from pyspark.serializers import NoOpSerializer

        schema = arrow_schema_of(spark, self.df)

        def decode(body: bytes) -> Any:
            return pa.ipc.read_record_batch(pa.py_buffer(body), schema)

        sc = spark.sparkContext
        # One lookup per key: SparkContext.getConf() copies every entry, two py4j calls each.
        host = spark.conf.get("spark.driver.host", "127.0.0.1")
        listener = socket.create_server((spark.conf.get("spark.driver.bindAddress", host), 0))
        self._watch(listener)
        token = secrets.token_hex(16)
        relay = _partition_relay(host, listener.getsockname()[1], token, self.read_ahead_bytes)
        # The relayed RDD has no elements: the tasks hand theirs over through the socket.
        encoded = _arrow_batch_rdd(spark, self.df, self.batch_rows).toJavaRDD()
        messages: RDD[bytes] = RDD(encoded, sc, NoOpSerializer())
        jrdd = messages.mapPartitions(relay)._jrdd.rdd()
        try:
            jobs = self._partition_jobs(sc, jrdd)
        except BaseException:
            self._unwatch(listener)
            listener.close()
            raise
        session = _StreamSession(
            listener, jobs, token.encode(), decode, watch=self._watch, unwatch=self._unwatch
        )
        try:
            partition = 0
            while True:
                jobs.request()
                batches = session.partition(partition)
                if batches is None:
                    return
                yield from batches
                partition += 1
        finally:
            try:
                jobs.stop(sc, self.tag)
            finally:
                self._unwatch(jobs.sock)
                session.close()

    def _iter_partition(self, spark: Any) -> Iterator[Any]:
        import pyarrow as pa

        sc = spark.sparkContext
        schema = arrow_schema_of(spark, self.df)
        jobs = self._partition_jobs(sc, _arrow_batch_rdd(spark, self.df, self.batch_rows))
        try:
            while True:
                jobs.request()
                if jobs.status() == 0:
                    return
                for body in jobs.rows():
                    yield pa.ipc.read_record_batch(pa.py_buffer(body), schema)
        finally:
            try:
                jobs.stop(sc, self.tag)
            finally:
                self._unwatch(jobs.sock)

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


def _close(stream: BufferedIOBase, sock: socket.socket) -> None:
    try:
        stream.close()
    except OSError:
        # After a cancel the socket is shut down: flushing what is buffered fails here. The
        # socket must still be closed, or it is left to the garbage collector (an "unclosed
        # socket" warning that surfaces in whichever test runs next).
        pass
    sock.close()


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def _arrow_batch_rdd(spark: Any, df: Any, batch_rows: int) -> Any:
    """The JVM RDD of *df*'s partitions as Arrow IPC record batch messages of at most
    *batch_rows* rows, encoded by the executors as for ``toArrow()``."""
    large = str(spark.conf.get("spark.sql.execution.arrow.useLargeVarTypes", "false")) == "true"
    tz = spark.conf.get("spark.sql.session.timeZone")
    return df._jdf.toArrowBatchRdd(batch_rows, tz, True, large)


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


@attrs.define(eq=False)
class _StreamSession:
    """The reader's side of the stream transfer: task connections and the partition jobs."""

    listener: socket.socket
    jobs: _PartitionJobs
    token: bytes
    decode: Callable[[bytes], Any]
    watch: Callable[[socket.socket], None] = attrs.field(kw_only=True)
    """Lets the reader's `cancel` shut a socket down (waking a blocked read)."""
    unwatch: Callable[[socket.socket], None] = attrs.field(kw_only=True)
    parked: dict[int, _TaskConnection] = attrs.field(factory=dict)
    """Connections of partitions after the current one, waiting for their turn."""
    selector: selectors.BaseSelector = attrs.field(factory=selectors.DefaultSelector)

    def __attrs_post_init__(self) -> None:
        self.selector.register(self.listener, selectors.EVENT_READ)
        self.selector.register(self.jobs.sock, selectors.EVENT_READ)

    def partition(self, index: int) -> Iterator[Any] | None:
        """The batches of partition *index*, or None when there is no such partition.

        Waits for the partition's task to connect, or for the job socket to say there are
        no more partitions or that the job failed.
        """
        connection = self.parked.pop(index, None)
        while connection is None:
            for key, _ in self.selector.select():
                if key.fileobj is self.jobs.sock:
                    if self.jobs.status() == 0:
                        return None
                    raise RuntimeError(f"partition {index}'s job ended before its task connected")
                connection = self._accept(index)
        return self._receive(index, connection)

    def _receive(self, index: int, first: _TaskConnection) -> Iterator[Any]:
        connection: _TaskConnection | None = first
        delivered = 0
        ended = False
        job_done = False
        try:
            while not (ended and job_done):
                if connection is not None:
                    if not connection.answered:
                        connection.answer(delivered)
                    try:
                        batch = connection.read_batch(self.decode)
                    except (EOFError, ConnectionError):
                        # The attempt died: Spark retries it (we wait for it) or fails the job.
                        self._drop(connection)
                        connection = None
                        continue
                    if batch is None:
                        ended = True
                        self._drop(connection)  # the task waits for this close to finish
                        connection = None
                    else:
                        delivered += 1
                        yield batch
                    continue
                # Waiting for the job to finish, or for a retry of a task attempt that died.
                for key, _ in self.selector.select():
                    if key.fileobj is self.jobs.sock:
                        if self.jobs.status() != 1 or not ended:
                            raise RuntimeError(
                                f"partition {index}'s job ended without delivering its rows"
                            )
                        for _row in self.jobs.rows():  # the mapped DataFrame has none
                            pass
                        job_done = True
                    else:
                        connection = self._accept(index)
                        if connection is not None:  # a retry: it resends nothing delivered
                            ended = False
        finally:
            if connection is not None:
                self._drop(connection)

    def _drop(self, connection: _TaskConnection) -> None:
        self.unwatch(connection.sock)
        connection.close()

    def _accept(self, current: int) -> _TaskConnection | None:
        """Accept a task's connection; return it if it is for *current*, else park or drop it."""
        sock, _ = self.listener.accept()
        self.watch(sock)
        sock.settimeout(60)  # a greeting must come at once; data may wait on the consumer
        stream = sock.makefile("rwb")
        try:
            hello = stream.read(_HELLO.size)
        except OSError:
            hello = b""
        sock.settimeout(None)
        connection = _TaskConnection(sock, stream)
        if len(hello) < _HELLO.size:
            self._drop(connection)
            return None
        token, partition, _attempt = _HELLO.unpack(hello)
        if not hmac.compare_digest(token, self.token) or partition < current:
            # A stranger, or a leftover attempt of a finished partition: it fails, harmlessly.
            self._drop(connection)
            return None
        if partition == current:
            return connection
        replaced = self.parked.pop(partition, None)
        if replaced is not None:  # a later attempt supersedes the earlier one
            self._drop(replaced)
        self.parked[partition] = connection
        return None

    def close(self) -> None:
        for connection in self.parked.values():
            self._drop(connection)
        self.parked.clear()
        self.selector.close()
        self.unwatch(self.listener)
        self.listener.close()
