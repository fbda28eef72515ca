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
    _dictionaries: tuple[str, ...] | None = None
    """The leaf columns pyarrow dictionary-encodes (`_paying_dictionaries`); None: all."""
    _settled: bool = False
    """`_dictionaries` was decided, from the first batch of `SETTLING_ROWS` rows or more."""

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
                stem = f"part-{number:06d}-{self.run}"
                dictionaries = self._dictionaries
                files, written = _write_arrow(
                    log, staging, table, self.partition_by, stem, dictionaries
                )
                if not self._settled and table.num_rows >= SETTLING_ROWS:
                    self._dictionaries = _paying_dictionaries(table, written, dictionaries)
                    self._settled = True
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
    log: TargetLog,
    staging: str,
    table: Any,
    partition_by: Sequence[str],
    stem: str,
    dictionaries: Sequence[str] | None,
) -> tuple[list[str], list[Any]]:
    """Stage *table* as Parquet with pyarrow: one file, or one per partition value, with a
    dictionary for the leaf columns *dictionaries* (None: all); the files written, relative
    to *staging*, and their metadata."""
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    log.fs.create_dir(staging, recursive=True)
    use_dictionary = True if dictionaries is None else list(dictionaries)
    metadata: list[Any] = []
    # Spark reads microsecond timestamps; nanoseconds would be refused at read time.
    if not partition_by:
        pq.write_table(
            table,
            f"{staging}/{stem}.parquet",
            filesystem=log.fs,
            coerce_timestamps="us",
            use_dictionary=use_dictionary,
            metadata_collector=metadata,
        )
        return [f"{stem}.parquet"], metadata
    files: list[str] = []

    def visit(written: Any) -> None:
        files.append(written.path[len(staging) + 1 :])
        metadata.append(written.metadata)

    options = {"coerce_timestamps": "us", "use_dictionary": use_dictionary}
    ds.write_dataset(
        table,
        staging,
        filesystem=log.fs,
        format="parquet",
        file_options=ds.ParquetFileFormat().make_write_options(**options),
        partitioning=list(partition_by),
        partitioning_flavor="hive",
        basename_template=f"{stem}-{{i}}.parquet",
        existing_data_behavior="overwrite_or_ignore",
        file_visitor=visit,
    )
    return sorted(files), metadata


SETTLING_ROWS = 10_000
"""Rows of the batch whose files decide which columns a sink dictionary-encodes: enough for
the repeats of a column to show."""

_WIDTHS = {"INT32": 4, "INT64": 8, "INT96": 12, "FLOAT": 4, "DOUBLE": 8}


def _paying_dictionaries(
    table: Any, written: Sequence[Any], dictionaries: Sequence[str] | None
) -> tuple[str, ...] | None:
    """The leaf columns of *written* (the files of *table*, written with a dictionary for
    *dictionaries*, None: all) worth a dictionary in the batches to come; None: all of them.

    A column keeps its dictionary unless its dictionary-encoded chunks were no smaller than
    its values written plain (the test parquet-mr, Spark's writer, makes on a column's
    first page): for a column of mostly distinct values (ids, measurements, timestamps) the
    dictionary only costs, and building it is most of the writing time. The plain size is
    known for the top-level columns of primitive types; the others keep theirs.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    encoded: dict[str, int] = {}
    leaves: dict[str, Any] = {}
    for metadata in written:
        for index in range(len(metadata.schema)):
            leaf = metadata.schema.column(index)
            leaves[leaf.path] = leaf
        for group in map(metadata.row_group, range(metadata.num_row_groups)):
            for chunk in map(group.column, range(group.num_columns)):
                if chunk.has_dictionary_page:
                    path = chunk.path_in_schema
                    encoded[path] = encoded.get(path, 0) + chunk.total_uncompressed_size
    keep = []
    for path, leaf in leaves.items():
        if dictionaries is not None and path not in dictionaries:
            continue
        size = encoded.get(path)
        column = table.column(path) if path in table.column_names else None
        if size is None or column is None:
            keep.append(path)
            continue
        values = len(column) - column.null_count
        kind = column.type
        if leaf.physical_type == "BYTE_ARRAY" and (
            pa.types.is_string(kind)
            or pa.types.is_large_string(kind)
            or pa.types.is_binary(kind)
            or pa.types.is_large_binary(kind)
        ):
            plain = 4 * values + (pc.sum(pc.binary_length(column)).as_py() or 0)
        elif leaf.physical_type == "FIXED_LEN_BYTE_ARRAY":
            plain = leaf.length * values
        elif leaf.physical_type in _WIDTHS and not pa.types.is_dictionary(kind):
            plain = _WIDTHS[leaf.physical_type] * values
        else:
            keep.append(path)
            continue
        if size < plain:
            keep.append(path)
    return None if len(keep) == len(leaves) else tuple(keep)


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
