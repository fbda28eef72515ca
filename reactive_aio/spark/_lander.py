"""Landing and recovery for ``to_spark``: one sink's writer of its target, on worker threads.

`Lander` opens the target (a directory, or a file-based table's location), becomes a writer
of it under ``_landing``'s protocol (recovering what gone writers left, emptying it for
``overwrite``), and lands batches: staged, synced, committed, published. A batch
some of whose positions another writer committed meanwhile is handed back unlanded, to be
filtered. Every method blocks and runs on a worker thread; two `Lander.land` calls may run
at once, the later one committing after the earlier one has been reported.
"""

from __future__ import annotations

__all__ = ("Landed", "Lander")

import threading
from collections.abc import Sequence
from typing import Any, Literal, final

import attrs

from .._commit import PositionSet
from ._dedupe import Positions
from ._landing import CommitRecord, Recovered, TargetLog, TargetWriter
from ._tables import Batch, table_of


@final
@attrs.frozen
class Landed:
    """What landing one batch came to."""

    record: CommitRecord | None
    """None: other writers committed some of the batch's positions meanwhile."""
    schema: Any
    news: tuple[CommitRecord, ...]
    """What other writers committed since the last look."""


@final
@attrs.define(eq=False)
class Lander:
    """One sink's side of its target: where it is, how batches are written, its writer."""

    target: str
    table: str | None
    spark: Any
    engine: Literal["arrow", "spark"]
    format: str
    partition_by: tuple[str, ...]
    positions: Positions | None
    run: str
    writer: TargetWriter | None = None
    _staging: threading.Lock = attrs.field(factory=threading.Lock)
    _failed: int | None = None
    """The first batch that failed: none handed over after it lands."""

    def open_log(self) -> TargetLog:
        if self.table is None:
            return TargetLog.open(self.target)
        return TargetLog.open(_table_location(self.spark, self.table))

    def attach(self, mode: str) -> Recovered:
        """Become a writer of the target (see ``_landing``) and read its log."""
        log = self.open_log()
        if mode == "error" and log.has_data():
            raise FileExistsError(
                f"{self.target} is not empty: resume it (mode='append') or overwrite it"
            )
        self.writer, recovered = TargetWriter.attach(log, self.run, overwrite=mode == "overwrite")
        return recovered

    def land(self, batch: Batch, number: int, schema: Any, after: threading.Event | None) -> Landed:
        """Stage one batch, then (once the batch before it, *after*, has been reported)
        commit and publish it, unless other writers committed part of it.

        Staging (encoding, writing, syncing the files) runs alongside the commit of the batch
        before; the commit, which reads what other writers committed, is where a conflict
        shows: a conflicting batch's files are deleted and it is handed back.
        """
        writer = self.writer
        assert writer is not None
        log = writer.log
        positions = batch.position_set() if self.positions is not None else PositionSet()
        table = table_of(batch.items, schema, self.positions, f"the schema of {self.target}")
        with self._staging:  # the first stage takes the writer's lock
            stage = writer.stage(number)
        staging = log.staging(stage)
        try:
            if self.engine == "arrow":
                files = _write_arrow(
                    log, staging, table, self.partition_by, f"part-{number:06d}-{self.run}"
                )
            else:
                staged = log.spark_staging(stage)
                _write_spark(self.spark, staged, table, self.format, self.partition_by)
                files = log.staged_files(stage)
            for name in files:
                log.sync(f"{staging}/{name}")
            if after is not None:
                after.wait()
            failed = self._failed
            if self.writer is None or (failed is not None and failed < number):
                raise RuntimeError(f"to_spark stopped landing in {self.target}")
            record = writer.commit(stage, table.num_rows, files, positions, table.schema)
            if record is None:
                log.fs.delete_dir(staging)
                return Landed(None, schema, writer.take_news())
        except BaseException:
            self._failed = number if self._failed is None else min(self._failed, number)
            try:
                log.fs.delete_dir(staging)
            except OSError:
                pass
            raise
        writer.publish(record)
        if self.table is not None:
            _refresh_table(self.spark, self.table, bool(self.partition_by))
        return Landed(record, table.schema, writer.take_news())

    def detach(self) -> None:
        """Stop being a writer of the target (idempotent)."""
        writer, self.writer = self.writer, None
        if writer is not None:
            writer.detach()


def _write_arrow(
    log: TargetLog, staging: str, table: Any, partition_by: Sequence[str], stem: str
) -> list[str]:
    """Stage *table* as Parquet with pyarrow: one file, or one per partition value; the
    files written, relative to *staging*."""
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    log.fs.create_dir(staging, recursive=True)
    # Spark reads microsecond timestamps; nanoseconds would be refused at read time.
    if not partition_by:
        pq.write_table(
            table, f"{staging}/{stem}.parquet", filesystem=log.fs, coerce_timestamps="us"
        )
        return [f"{stem}.parquet"]
    files: list[str] = []
    ds.write_dataset(
        table,
        staging,
        filesystem=log.fs,
        format="parquet",
        file_options=ds.ParquetFileFormat().make_write_options(coerce_timestamps="us"),
        partitioning=list(partition_by),
        partitioning_flavor="hive",
        basename_template=f"{stem}-{{i}}.parquet",
        existing_data_behavior="overwrite_or_ignore",
        file_visitor=lambda written: files.append(written.path[len(staging) + 1 :]),
    )
    return sorted(files)


def _write_spark(
    spark: Any, staging: str, table: Any, format: str, partition_by: Sequence[str]
) -> None:
    """Stage *table* through a Spark job: one file (per partition value), so it lands at once."""
    writer = spark.createDataFrame(table).coalesce(1).write.mode("overwrite").format(format)
    if partition_by:
        writer = writer.partitionBy(*partition_by)
    writer.save(staging)


def _table_location(spark: Any, table: str) -> str:
    """The directory behind a file-based table."""
    if not spark.catalog.tableExists(table):
        raise LookupError(f"table {table} does not exist: create it first, with its schema")
    details = {row[0]: row[1] for row in spark.sql(f"DESCRIBE TABLE EXTENDED {table}").collect()}
    provider = str(details.get("Provider") or "").lower()
    if provider not in ("parquet", "orc", "json", "csv"):
        raise ValueError(
            f"table {table} is stored as {provider or 'unknown'}; to_spark lands in file-based "
            "tables (parquet, orc, json, csv)"
        )
    location = str(details.get("Location") or "")
    if not location:
        raise ValueError(f"table {table} has no location")
    if location.startswith("file:") and not location.startswith("file://"):
        location = "file://" + location[len("file:") :]
    return location


def _refresh_table(spark: Any, table: str, partitioned: bool) -> None:
    if partitioned:
        spark.sql(f"ALTER TABLE {table} RECOVER PARTITIONS")
    spark.sql(f"REFRESH TABLE {table}")
