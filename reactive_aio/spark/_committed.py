"""Reading a target that `to_spark` lands in: what is committed, and only that.

A plain reader of the directory (``spark.read.parquet(path)``) sees every file in place. A
batch of one file appears whole, but a partitioned batch is renamed into place file by file,
so a reader listing the directory meanwhile, or after a writer crashed between two of those
renames (until the next writer opens the target and finishes them), can see part of it.
`read_committed` reads only the files of committed batches that are wholly in place.
"""

from __future__ import annotations

__all__ = ("committed_positions", "read_committed", "recover_target")

import os
from typing import Any

from .._commit import PositionSet
from ._landing import TargetLog
from ._threads import to_thread


def _log(target: str | os.PathLike[str] | TargetLog) -> TargetLog:
    return target if isinstance(target, TargetLog) else TargetLog.open(target)


async def committed_positions(path: str | os.PathLike[str] | TargetLog) -> PositionSet:
    """Every source position committed in the target *path*, by any writer.

    Only reads: a writer landing into the target meanwhile is never disturbed.
    """
    records = await to_thread(lambda: _log(path).read_records())
    return PositionSet().union(*(r.positions for r in records))


def read_committed(spark: Any, path: str | os.PathLike[str], *, format: str = "parquet") -> Any:
    """A DataFrame of the target's committed batches that are wholly in place, and nothing else.

    A batch a writer is renaming into place right now, or one a crashed writer left half
    renamed, is left out whole until it is complete (the next writer to open the target
    completes a crashed writer's batches; so does `recover_target`). Partition columns are
    read from the ``col=value/`` directories as usual. Spark is given the schema of an
    unpartitioned Parquet target whose columns are of plain types (numbers, strings, bytes,
    dates, timestamps with a time zone) from the target's log: the one it would infer, without
    the job it runs to read a file's footer. Blocking (it lists files and asks Spark): from a
    loop, call it through `reactive_aio.spark.to_thread`.

    Raises:
        FileNotFoundError: *path* holds no committed batch and no schema.
    """
    log = _log(path)
    records = log.read_records()
    names = [name for r in records if log.published(r) for name in r.files]
    schema = log.read_schema()
    if names:
        reader = spark.read.format(format).option("basePath", log.spark_path)
        known = _parquet_schema(schema) if format == "parquet" else None
        if known is not None and not any("/" in name for name in names):
            # What Spark would infer from a file's footer (in a job of its own), given.
            reader = reader.schema(known)
        return reader.load([f"{log.spark_path}/{name}" for name in names])
    if schema is None:
        raise FileNotFoundError(f"{log.spark_path} holds no committed batch")
    from pyspark.sql.pandas.types import from_arrow_schema

    return spark.createDataFrame([], schema=from_arrow_schema(schema))


def _parquet_schema(schema: Any) -> Any:
    """The Spark schema Spark infers from the Parquet files of a target of Arrow *schema*
    (either engine writes them), or None unless every column has a type of which that is
    known: flat types that both map one way (not a timestamp without a time zone, which
    Spark's writer takes as local time; not one in nanoseconds; nothing unsigned or nested).
    A partitioned target's partition columns are not in its files: Spark infers their types
    from the directory names, so the caller lets it infer the whole schema there."""
    if schema is None:
        return None
    import pyarrow as pa
    import pyarrow.types as pat

    def plain(field: Any) -> bool:
        kind = field.type
        if pat.is_timestamp(kind):
            return kind.tz is not None and kind.unit != "ns"
        return bool(
            pat.is_boolean(kind)
            or pat.is_signed_integer(kind)
            or pat.is_float32(kind)
            or pat.is_float64(kind)
            or pat.is_decimal128(kind)
            or pat.is_string(kind)
            or pat.is_large_string(kind)
            or pat.is_binary(kind)
            or pat.is_large_binary(kind)
            or pat.is_date32(kind)
        )

    if not all(map(plain, schema)):
        return None
    from pyspark.sql.pandas.types import from_arrow_schema

    # Spark reads every column of a file as nullable, whatever its footer says.
    return from_arrow_schema(pa.schema([field.with_nullable(True) for field in schema]))


async def recover_target(path: str | os.PathLike[str]) -> None:
    """Finish what crashed writers left in the target *path*: publish their committed batches,
    delete their uncommitted ones. Live writers are left alone (see the guide's "what holds
    where" for how a writer is known to be gone)."""
    await to_thread(lambda: _log(path).recover())
