"""The commit protocol of a directory target: staged files, a commit log, any number of writers.

Layout of a target directory ``T``::

    T/part-000007-<run>.parquet                 landed files (or T/col=value/part-… when partitioned)
    T/_reactive_aio/schema.arrow                the target's Arrow schema, fixed by its first batch
    T/_reactive_aio/commits/0000000012-<run>.json   one commit record per batch
    T/_reactive_aio/staging/<run>/7/…           a writer's batch until it is published
    T/_reactive_aio/writers/<run>.lock          held by a live writer from its first batch on
    T/_reactive_aio/commit.lock                 held while a record is written or a gone
                                                writer's leftovers are recovered

Spark and pyarrow skip names starting with ``_`` or ``.``, so nothing under ``_reactive_aio``
is ever read as data. Every writer (one `SparkSink` run) has its own id, its own staging
directory and its own numbering of what it stages, so writers never touch each other's files.
A batch goes through three steps:

1. its files are written under ``staging/<run>/<n>/`` and flushed to disk;
2. under the commit lock, the writer reads the records other writers added since it last
   looked: if one of them committed a position of this batch, the batch is handed back to be
   filtered (it would land that record twice); otherwise the staged files are checked and
   the record, numbered one past the highest in the log, is renamed into ``commits/``. This
   is the commit point;
3. its files are renamed from staging into place, which makes them visible.

Readers (`TargetLog.read_records`, ``committed_positions``) only read. Recovery touches only
what belongs to a writer that is provably gone: on a local filesystem a writer holds an
exclusive ``flock`` on its lock file for as long as it lives, and the kernel drops it when the
process dies, so a lock that can be taken belongs to a dead writer (a writer takes it before
its first batch: until then it has nothing to recover). Its committed batches are
published (roll forward), its uncommitted ones deleted (roll back). A filesystem without
locks (HDFS, object stores) cannot prove a writer gone: there a writer's staged files are
recovered only once they are `STALE_AFTER` seconds old, and several writers at once are not
serialized (see the guide's "what holds where").

The anchors: Structured Streaming's file sink, which lists committed files in its metadata
log, and Delta's idempotent writes, which key each commit by application and version.
"""

from __future__ import annotations

__all__ = (
    "LOG_DIR",
    "STALE_AFTER",
    "CommitRecord",
    "Recovered",
    "TargetLog",
    "TargetWriter",
)

import contextlib
import fcntl
import json
import os
import time
import uuid
import weakref
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, final

import attrs

from .._commit import PositionSet

LOG_DIR = "_reactive_aio"
STALE_AFTER = 3_600.0
"""Seconds after which staged files on a filesystem without locks count as a gone writer's."""
_LIST_ATTEMPTS = 20
_FORMAT = 2
_READABLE_FORMATS = (1, 2)


@final
@attrs.frozen
class CommitRecord:
    """What a commit record says about one batch."""

    batch: int
    """The batch's number in the target (one past the highest before it)."""
    rows: int
    files: tuple[str, ...]
    """Paths relative to the target, with ``/`` separators."""
    positions: PositionSet
    run: str
    """Which writer (run of a sink) wrote the batch: a random id per sink."""
    stage: str
    """The batch's staging directory, relative to ``staging/``: ``<run>/<n>``."""

    @property
    def name(self) -> str:
        """The record's file name in ``commits/``; unique to its writer, sorted by batch."""
        return f"{self.batch:010d}-{self.run}.json"

    def to_json(self) -> dict[str, Any]:
        return {
            "format": _FORMAT,
            "batch": self.batch,
            "rows": self.rows,
            "files": list(self.files),
            "positions": self.positions.to_json(),
            "run": self.run,
            "stage": self.stage,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CommitRecord:
        if data.get("format") not in _READABLE_FORMATS:
            raise ValueError(f"unknown commit record format {data.get('format')!r}")
        batch = int(data["batch"])
        return cls(
            batch,
            int(data["rows"]),
            tuple(data["files"]),
            PositionSet.from_json(data["positions"]),
            str(data["run"]),
            str(data.get("stage", batch)),  # format 1 staged by batch number
        )


@final
@attrs.frozen
class Recovered:
    """A writer's first view of its target."""

    records: tuple[CommitRecord, ...]
    """Every committed batch, in batch order."""
    schema: Any
    """The target's ``pyarrow.Schema``, or None before its first batch."""


@final
@attrs.define(eq=False)
class TargetLog:
    """Blocking file operations on one target's log; used from worker threads."""

    fs: Any
    """A ``pyarrow.fs.FileSystem``."""
    root: str
    """The target directory in *fs*'s terms."""
    spark_path: str
    """The target as Spark should be given it."""

    @classmethod
    def open(cls, target: str | os.PathLike[str]) -> TargetLog:
        """The target at a local path or at a URI pyarrow's filesystems know."""
        import pyarrow.fs as pafs

        text = os.fspath(target)
        if "://" in text or text.startswith("file:"):
            fs, root = pafs.FileSystem.from_uri(text)
            if isinstance(fs, pafs.LocalFileSystem):
                return cls(fs, root, root)
            return cls(fs, root.rstrip("/"), text.rstrip("/"))
        root = str(Path(text).absolute())
        return cls(pafs.LocalFileSystem(), root, root)

    # -- paths ----------------------------------------------------------------------------

    @property
    def local(self) -> bool:
        """Whether the target is on a filesystem of this machine's kernel (locks work)."""
        import pyarrow.fs as pafs

        return isinstance(self.fs, pafs.LocalFileSystem)

    def path(self, *parts: str) -> str:
        return "/".join((self.root, *parts))

    def staging(self, stage: str) -> str:
        """Where the files of the batch staged as *stage* (``<run>/<n>``) are written."""
        return self.path(LOG_DIR, "staging", stage)

    def spark_staging(self, stage: str) -> str:
        """`staging` as Spark should be given it."""
        return "/".join((self.spark_path, LOG_DIR, "staging", stage))

    # -- small helpers --------------------------------------------------------------------

    def exists(self, path: str) -> bool:
        import pyarrow.fs as pafs

        info: Any = self.fs.get_file_info(path)
        return bool(info.type != pafs.FileType.NotFound)

    def entries(self, path: str, *, recursive: bool = False) -> list[Any]:
        import pyarrow.fs as pafs

        selector = pafs.FileSelector(path, allow_not_found=True, recursive=recursive)
        for _ in range(_LIST_ATTEMPTS - 1):
            try:
                infos: list[Any] = self.fs.get_file_info(selector)
                return infos
            except FileNotFoundError:
                # An entry went between the listing and its stat: a writer renamed its
                # temporary record or published a file meanwhile (readers take no lock).
                continue
        infos = self.fs.get_file_info(selector)
        return infos

    def sync(self, path: str) -> None:
        """Flush a file or directory to disk (local filesystems; others are durable on close)."""
        if not self.local:
            return
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def write_atomically(self, path: str, data: bytes) -> None:
        """Write *path* whole or not at all: a hidden temporary file, flushed, then renamed."""
        directory, name = path.rsplit("/", 1)
        self.fs.create_dir(directory, recursive=True)
        temporary = f"{directory}/.{name}.{uuid.uuid4().hex}.tmp"
        with self.fs.open_output_stream(temporary) as stream:
            stream.write(data)
        self.sync(temporary)
        self.fs.move(temporary, path)
        self.sync(directory)

    def _read(self, path: str) -> bytes:
        with self.fs.open_input_stream(path) as stream:
            data: bytes = stream.read()
        return data

    @contextlib.contextmanager
    def locked(self, *parts: str) -> Iterator[None]:
        """Hold the exclusive lock file at *parts* (blocking); no lock without a local kernel."""
        if not self.local:
            yield
            return
        fd = self.lock_file(self.path(LOG_DIR, *parts))
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def lock_file(self, path: str) -> int:
        """An open descriptor of the lock file at *path*, created if missing."""
        os.makedirs(path.rsplit("/", 1)[0], exist_ok=True)
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o644)

    # -- reading: never writes --------------------------------------------------------------

    def has_data(self) -> bool:
        """Whether the target holds anything: data files or a commit log."""
        return any(not info.base_name.startswith(".") for info in self.entries(self.root))

    def read_schema(self) -> Any:
        """The target's fixed schema, or None before its first batch."""
        import pyarrow as pa

        path = self.path(LOG_DIR, "schema.arrow")
        if not self.exists(path):
            return None
        return pa.ipc.read_schema(pa.py_buffer(self._read(path)))

    def record_names(self) -> list[str]:
        """The names in ``commits/`` of every committed record, in batch order."""
        return sorted(
            info.base_name
            for info in self.entries(self.path(LOG_DIR, "commits"))
            if info.base_name.endswith(".json") and not info.base_name.startswith(".")
        )

    def read_record(self, name: str) -> CommitRecord:
        path = self.path(LOG_DIR, "commits", name)
        try:
            return CommitRecord.from_json(json.loads(self._read(path)))
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"unreadable commit record {path}: {exc}") from exc

    def read_records(self) -> tuple[CommitRecord, ...]:
        """Every committed batch, in batch order (numbers may repeat where writers were not
        serialized, never skip)."""
        records = tuple(map(self.read_record, self.record_names()))
        expected = 0
        for record in records:
            if record.batch > expected:
                raise ValueError(
                    f"the commit log of {self.spark_path} has no record of batch {expected} "
                    f"(it goes on with batch {record.batch}): it was edited by hand"
                )
            expected = record.batch + 1
        return records

    def published(self, record: CommitRecord) -> bool:
        """Whether every file of *record* is in place."""
        return all(self.exists(self.path(name)) for name in record.files)

    def staged_files(self, stage: str) -> list[str]:
        """Data files written under *stage*'s staging directory, relative to it."""
        base = self.staging(stage)
        return sorted(
            info.path[len(base) + 1 :]
            for info in self.entries(base, recursive=True)
            if info.is_file
            and not any(part.startswith(("_", ".")) for part in info.path[len(base) :].split("/"))
        )

    # -- writing ----------------------------------------------------------------------------

    def publish(self, record: CommitRecord, *, settle: bool = True) -> set[str]:
        """Rename a committed batch's staged files into place (idempotent); return the
        directories they went to.

        Settling syncs those directories and then deletes the batch's staging directory.
        A live writer leaves that to `TargetWriter.detach`: until the renames are synced, a
        crash may undo them, and the staged files, still under a committed stage, are then
        published again by recovery.
        """
        base = self.staging(record.stage)
        directories = set()
        for name in record.files:
            staged = f"{base}/{name}"
            if not self.exists(staged):
                continue  # published before a crash
            final = self.path(name)
            directory = final.rsplit("/", 1)[0]
            if directory != self.root and directory not in directories:
                self.fs.create_dir(directory, recursive=True)
            directories.add(directory)
            self.fs.move(staged, final)
        if settle:
            for directory in directories:
                self.sync(directory)
            if self.exists(base):
                self.fs.delete_dir(base)
        return directories

    def recover(self) -> None:
        """Finish what gone writers left: publish their committed batches, delete the rest.
        Takes the commit lock; every writer that is alive is left alone."""
        with self.locked("commit.lock"):
            self._recover_gone(None)

    def _recover_gone(self, keep: str | None) -> None:
        """`recover`'s work, under the commit lock."""
        staging = self.path(LOG_DIR, "staging")
        runs = {info.base_name for info in self.entries(staging) if info.base_name != keep}
        writers = self.path(LOG_DIR, "writers")
        if self.local:
            runs.update(
                info.base_name.removesuffix(".lock")
                for info in self.entries(writers)
                if info.base_name.endswith(".lock")
            )
            runs.discard(keep or "")
        if not runs:
            return
        records = {r.stage: r for r in self.read_records()}
        for info in self.entries(self.path(LOG_DIR, "commits")):
            if info.base_name.startswith("."):  # a record never renamed into place
                self.fs.delete_file(info.path)
        for run in sorted(runs):
            with self._gone(run) as gone:
                if not gone:
                    continue
                base = f"{staging}/{run}"
                if run in records:  # a format-1 batch, staged under its number
                    self.publish(records[run])
                for info in self.entries(base):
                    stage = f"{run}/{info.base_name}"
                    if stage in records:
                        self.publish(records[stage])
                    else:
                        self._delete(info)
                if self.exists(base):
                    self.fs.delete_dir(base)

    @contextlib.contextmanager
    def _gone(self, run: str) -> Iterator[bool]:
        """Whether writer *run* is provably gone; its lock, if any, is held meanwhile and its
        lock file removed after."""
        if not self.local:
            newest = max(
                (
                    i.mtime.timestamp()
                    for i in self.entries(self.staging(run), recursive=True)
                    if i.mtime is not None
                ),
                default=0.0,
            )
            yield time.time() - newest > STALE_AFTER
            return
        path = self.path(LOG_DIR, "writers", f"{run}.lock")
        fd = self.lock_file(path)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
                return
            yield True
            # Under the commit lock, so no writer is creating it meanwhile; a writer detaching
            # may have removed it already.
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        finally:
            os.close(fd)

    def clear(self, keep: str) -> None:
        """Empty the target (overwrite mode) but for the locks; refused while another writer
        lives. Called under the commit lock by writer *keep*."""
        if self.local:
            for info in self.entries(self.path(LOG_DIR, "writers")):
                run = info.base_name.removesuffix(".lock")
                if run == keep:
                    continue
                with self._gone(run) as gone:
                    if not gone:
                        raise FileExistsError(
                            f"{self.spark_path} is being landed into by another writer "
                            f"({run}): it cannot be overwritten now"
                        )
        for info in self.entries(self.root):
            if info.base_name != LOG_DIR:
                self._delete(info)
        for info in self.entries(self.path(LOG_DIR)):
            if info.base_name not in ("writers", "commit.lock"):
                self._delete(info)

    def _delete(self, info: Any) -> None:
        if info.is_file:
            self.fs.delete_file(info.path)
        else:
            self.fs.delete_dir(info.path)


@final
@attrs.define(eq=False)
class TargetWriter:
    """One writer's side of the protocol: its lock, its staging, its view of the log.

    Blocking; every method runs on a worker thread, one at a time but for `stage`, which
    may run beside the others (it touches nothing they do).
    """

    log: TargetLog
    run: str
    _unlock: Callable[[], Any] | None = None
    """Closes the descriptor holding this writer's lock (local filesystems); also called when
    the writer is collected without `detach`, as a file object closes itself."""
    _seen: set[str] = attrs.field(factory=set)
    """Names of the records this writer has read or written."""
    _last_batch: int = -1
    """The highest batch number seen in the log."""
    _committed: PositionSet = attrs.field(factory=PositionSet)
    """Every position committed in the log as far as this writer has read it, its own too."""
    _schema_stored: bool = False
    _unreported: list[CommitRecord] = attrs.field(factory=list)
    _unsynced: set[str] = attrs.field(factory=set)
    """Directories this writer published into and has not synced yet."""

    @classmethod
    def attach(cls, log: TargetLog, run: str, *, overwrite: bool) -> tuple[TargetWriter, Recovered]:
        """Become a writer of *log*: recover gone writers, read the log. The writer's lock
        comes with its first batch (`stage`): until then it has nothing to recover."""
        writer = cls(log, run)
        with log.locked("commit.lock"):
            if overwrite:
                log.clear(keep=run)
            log._recover_gone(keep=run)
            records = writer._news()
            for record in records:  # a live writer may be publishing its last batch
                if not log.exists(log.staging(record.stage)) and not log.published(record):
                    raise FileNotFoundError(
                        f"{log.spark_path}: a file of committed batch {record.batch} is "
                        "missing: the target was changed by hand"
                    )
        schema = log.read_schema()
        writer._schema_stored = schema is not None
        return writer, Recovered(records, schema)

    def stage(self, number: int) -> str:
        """The staging name of this writer's batch *number*. Before the first, the writer
        takes its lock, under the commit lock so that no recovery sees its lock file without
        the lock on it."""
        log = self.log
        if self._unlock is None and log.local:
            with log.locked("commit.lock"):
                fd = log.lock_file(log.path(LOG_DIR, "writers", f"{self.run}.lock"))
                self._unlock = weakref.finalize(self, os.close, fd)
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return f"{self.run}/{number}"

    def publish(self, record: CommitRecord) -> None:
        """Publish this writer's committed batch; its renames are synced at `detach`."""
        self._unsynced |= self.log.publish(record, settle=False)

    def detach(self) -> None:
        """Stop being a writer: this writer's renames are synced, then its staging (but for
        files of a batch it could not publish) and its lock go."""
        log = self.log
        for directory in sorted(self._unsynced):
            log.sync(directory)
        self._unsynced.clear()
        own = log.path(LOG_DIR, "staging", self.run)
        held = {
            info.path[len(own) + 1 :].split("/")[0]
            for info in log.entries(own, recursive=True)
            if info.is_file
        }
        for stage in log.entries(own) if held else []:
            if stage.base_name not in held:
                log.fs.delete_dir(stage.path)
        if not held:
            with contextlib.suppress(FileNotFoundError):
                log.fs.delete_dir(own)
        unlock, self._unlock = self._unlock, None
        if unlock is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(log.path(LOG_DIR, "writers", f"{self.run}.lock"))
            unlock()

    def _news(self) -> tuple[CommitRecord, ...]:
        """Records this writer has not seen yet, in batch order."""
        log = self.log
        names = log.record_names()
        if not self._seen.issubset(names):
            raise FileNotFoundError(
                f"{log.spark_path} was overwritten by another writer meanwhile: "
                "this writer's view of it is gone"
            )
        fresh = [name for name in names if name not in self._seen]
        records = tuple(map(log.read_record, fresh))
        self._seen.update(fresh)
        if records:
            self._last_batch = max(self._last_batch, records[-1].batch)
            self._committed = self._committed.union(*(r.positions for r in records))
        return records

    def conflicts(self, positions: PositionSet) -> bool:
        """Whether the log holds any of *positions* committed, by anyone: the items of a
        batch were checked against what their sink knew when they arrived, which can be
        older than the log. Reads what other writers committed meanwhile (for
        `take_news`)."""
        self._unreported.extend(self._news())
        return bool(positions) and bool(positions.intersection(self._committed))

    def take_news(self) -> tuple[CommitRecord, ...]:
        """Other writers' records read since the last call, in batch order."""
        news, self._unreported = tuple(self._unreported), []
        return news

    def commit(
        self, stage: str, rows: int, files: Iterable[str], positions: PositionSet, schema: Any
    ) -> CommitRecord | None:
        """Commit the batch staged as *stage*; None if others committed one of its positions.

        The staged files must be synced already. Under the commit lock: the log's new
        records are read (see `conflicts`), the staged files checked, the schema fixed by the
        first batch, and the record written one past the highest batch number.
        """
        log = self.log
        files = tuple(files)
        with log.locked("commit.lock"):
            if self.conflicts(positions):
                return None
            base = log.staging(stage)
            for name in files:
                if not log.exists(f"{base}/{name}"):
                    raise FileNotFoundError(
                        f"{log.spark_path}: staged file {name} of this writer's batch is gone; "
                        "the batch was not committed"
                    )
            if not self._schema_stored:
                stored = log.read_schema()
                if stored is None:
                    log.write_atomically(
                        log.path(LOG_DIR, "schema.arrow"), schema.serialize().to_pybytes()
                    )
                elif _columns(stored) != _columns(schema):
                    raise TypeError(
                        f"the schema of {log.spark_path} was fixed meanwhile by another writer "
                        "and differs from this batch's"
                    )
                self._schema_stored = True
            record = CommitRecord(self._last_batch + 1, rows, files, positions, self.run, stage)
            data = json.dumps(record.to_json(), separators=(",", ":")).encode()
            log.write_atomically(log.path(LOG_DIR, "commits", record.name), data)
            self._seen.add(record.name)
            self._last_batch = record.batch
            self._committed |= positions
        return record


def _columns(schema: Any) -> list[tuple[str, Any]]:
    """Names and types; nullability and metadata aside, as the sink compares schemas."""
    return [(field.name, field.type) for field in schema]
