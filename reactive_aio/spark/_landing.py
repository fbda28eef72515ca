"""The commit protocol of a directory target: staged files, a commit log, visibility in one step.

Layout of a target directory ``T``::

    T/part-000007-<run>.parquet            landed files (or T/col=value/part-… when partitioned)
    T/_reactive_aio/schema.arrow           the target's Arrow schema, fixed by its first batch
    T/_reactive_aio/commits/0000000007.json   one commit record per batch
    T/_reactive_aio/staging/7/…            a batch's files until they are published

Spark and pyarrow skip names starting with ``_`` or ``.``, so nothing under ``_reactive_aio``
is ever read as data. A batch goes through three steps, each a rename within the target's
filesystem:

1. its files are written under ``staging/<batch>/`` (and flushed to disk);
2. its commit record is written to a hidden temporary name and renamed to
   ``commits/<batch>.json``: this is the commit point;
3. its files are renamed from staging into place, which makes them visible.

A batch whose record exists is committed, whatever happened after; `TargetLog.recover`
finishes step 3 for it (roll forward) and deletes staged files no record names (roll back).
The anchors: Structured Streaming's file sink, which lists committed files in its metadata
log, and Delta's idempotent writes, which key each commit by application and version.

The filesystem is pyarrow's (local paths, ``file://``, ``hdfs://``, ``s3://``, ``gs://``…).
Renames are atomic on local and HDFS-like filesystems; on object stores a rename is a copy,
so a batch of several files (a partitioned one) can be seen half published; the guide says
what holds where.
"""

from __future__ import annotations

__all__ = ("LOG_DIR", "CommitRecord", "Recovered", "TargetLog")

import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, final

import attrs

from .._core import PositionSet

LOG_DIR = "_reactive_aio"
_FORMAT = 1


@final
@attrs.frozen
class CommitRecord:
    """What a commit record says about one batch."""

    batch: int
    rows: int
    files: tuple[str, ...]
    """Paths relative to the target, with ``/`` separators."""
    positions: PositionSet
    run: str
    """Which run of a sink wrote the batch (a random id per sink)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "format": _FORMAT,
            "batch": self.batch,
            "rows": self.rows,
            "files": list(self.files),
            "positions": self.positions.to_json(),
            "run": self.run,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CommitRecord:
        if data.get("format") != _FORMAT:
            raise ValueError(f"unknown commit record format {data.get('format')!r}")
        return cls(
            int(data["batch"]),
            int(data["rows"]),
            tuple(data["files"]),
            PositionSet.from_json(data["positions"]),
            str(data["run"]),
        )


@final
@attrs.frozen
class Recovered:
    """The state of a target's commit log after recovery."""

    records: tuple[CommitRecord, ...]
    """Every committed batch, in batch order."""
    schema: Any
    """The target's ``pyarrow.Schema``, or None before its first batch."""

    @property
    def next_batch(self) -> int:
        return self.records[-1].batch + 1 if self.records else 0

    @property
    def rows(self) -> int:
        return sum(r.rows for r in self.records)


def _record_name(batch: int) -> str:
    return f"{batch:010d}.json"


@final
@attrs.define(eq=False)
class TargetLog:
    """Blocking file operations of the protocol for one target; used from a worker thread."""

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
        import pyarrow.fs as pafs

        return isinstance(self.fs, pafs.LocalFileSystem)

    def _path(self, *parts: str) -> str:
        return "/".join((self.root, *parts))

    def staging(self, batch: int) -> str:
        """Where the files of *batch* are written before they are committed."""
        return self._path(LOG_DIR, "staging", str(batch))

    def spark_staging(self, batch: int) -> str:
        """`staging` as Spark should be given it."""
        return "/".join((self.spark_path, LOG_DIR, "staging", str(batch)))

    # -- small helpers --------------------------------------------------------------------

    def _exists(self, path: str) -> bool:
        import pyarrow.fs as pafs

        info: Any = self.fs.get_file_info(path)
        return bool(info.type != pafs.FileType.NotFound)

    def _list(self, path: str, *, recursive: bool = False) -> list[Any]:
        import pyarrow.fs as pafs

        selector = pafs.FileSelector(path, allow_not_found=True, recursive=recursive)
        infos: list[Any] = self.fs.get_file_info(selector)
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

    def _write_atomically(self, path: str, data: bytes, *, exclusive: bool) -> None:
        directory, name = path.rsplit("/", 1)
        self.fs.create_dir(directory, recursive=True)
        temporary = f"{directory}/.{name}.{uuid.uuid4().hex}.tmp"
        with self.fs.open_output_stream(temporary) as stream:
            stream.write(data)
        self.sync(temporary)
        if exclusive and self._exists(path):
            self.fs.delete_file(temporary)
            raise FileExistsError(
                f"{path} exists already: another writer is landing into the same target"
            )
        self.fs.move(temporary, path)
        self.sync(directory)

    def _read(self, path: str) -> bytes:
        with self.fs.open_input_stream(path) as stream:
            data: bytes = stream.read()
        return data

    # -- the target as a whole ------------------------------------------------------------

    def has_data(self) -> bool:
        """Whether the target holds anything: data files or a commit log."""
        return any(not info.base_name.startswith(".") for info in self._list(self.root))

    def clear(self) -> None:
        """Empty the target (overwrite mode): data files and commit log alike."""
        if self._exists(self.root):
            self.fs.delete_dir_contents(self.root, missing_dir_ok=True)

    def read_schema(self) -> Any:
        """The target's fixed schema, or None before its first batch."""
        import pyarrow as pa

        path = self._path(LOG_DIR, "schema.arrow")
        if not self._exists(path):
            return None
        return pa.ipc.read_schema(pa.py_buffer(self._read(path)))

    def write_schema(self, schema: Any) -> None:
        """Fix the target's schema (before its first commit)."""
        self._write_atomically(
            self._path(LOG_DIR, "schema.arrow"), schema.serialize().to_pybytes(), exclusive=False
        )

    def _records(self) -> Iterator[CommitRecord]:
        for info in sorted(self._list(self._path(LOG_DIR, "commits")), key=lambda i: i.path):
            name = info.base_name
            if name.startswith("."):  # a record that was never renamed into place
                self.fs.delete_file(info.path)
                continue
            if not name.endswith(".json"):
                continue
            try:
                yield CommitRecord.from_json(json.loads(self._read(info.path)))
            except (ValueError, KeyError, TypeError) as exc:
                raise ValueError(f"unreadable commit record {info.path}: {exc}") from exc

    def recover(self) -> Recovered:
        """Read the commit log; finish publishing committed batches, drop uncommitted ones."""
        records = tuple(self._records())
        for expected, record in enumerate(records):
            if record.batch != expected:
                raise ValueError(
                    f"the commit log of {self.spark_path} has no record of batch {expected} "
                    f"(it goes on with batch {record.batch}): it was edited by hand"
                )
        committed = {str(r.batch) for r in records}
        for info in self._list(self._path(LOG_DIR, "staging")):
            if info.base_name in committed:
                self.publish(records[int(info.base_name)])
            else:
                self.fs.delete_dir(info.path)
        for record in records:
            for name in record.files:
                if not self._exists(self._path(name)):
                    raise FileNotFoundError(
                        f"{self.spark_path}/{name} of committed batch {record.batch} is missing"
                    )
        return Recovered(records, self.read_schema())

    # -- one batch ------------------------------------------------------------------------

    def staged_files(self, batch: int) -> list[str]:
        """Data files written under *batch*'s staging directory, relative to it."""
        base = self.staging(batch)
        return sorted(
            info.path[len(base) + 1 :]
            for info in self._list(base, recursive=True)
            if info.is_file
            and not any(part.startswith(("_", ".")) for part in info.path[len(base) :].split("/"))
        )

    def commit(self, record: CommitRecord) -> None:
        """Make *record*'s batch committed: its files must be staged (and synced) already."""
        data = json.dumps(record.to_json(), separators=(",", ":")).encode()
        path = self._path(LOG_DIR, "commits", _record_name(record.batch))
        self._write_atomically(path, data, exclusive=True)

    def publish(self, record: CommitRecord) -> None:
        """Rename a committed batch's staged files into place (idempotent)."""
        base = self.staging(record.batch)
        directories = set()
        for name in record.files:
            staged = f"{base}/{name}"
            if not self._exists(staged):
                continue  # published before a crash
            final = self._path(name)
            directory = final.rsplit("/", 1)[0]
            if directory != self.root and directory not in directories:
                self.fs.create_dir(directory, recursive=True)
            directories.add(directory)
            self.fs.move(staged, final)
        for directory in directories:
            self.sync(directory)
        self.fs.delete_dir(base)
