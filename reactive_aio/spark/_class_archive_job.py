"""The representative job `build_class_archive` runs in a child process, to dump a class
archive (``dump``) or to prove that a session maps it (``check``):
``python -m reactive_aio.spark._class_archive_job dump|check ARCHIVE``."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from ._class_archive import crash_log
from ._session import local_driver_options, spark_session


def _representative_job(step: str, archive: Path) -> None:
    """In a child: a session whose JVM dumps (or, with ``-Xshare:on``, must map) *archive*,
    running what local jobs run first: Arrow in, Spark's Parquet writer and reader, a SQL
    aggregate with its code generation, Arrow out. The JVM exits before this returns."""
    import pyarrow as pa
    from pyspark import SparkContext

    options = local_driver_options(archive=False)
    if step == "dump":
        options += f" -XX:ArchiveClassesAtExit={archive}"
    else:
        options += (
            f" -Xshare:on -XX:SharedArchiveFile={archive}"
            f" -XX:ErrorFile={crash_log(archive)} -XX:-CreateCoredumpOnCrash"
        )
    spark = spark_session(
        "local[*]",
        app_name="reactive_aio class archive",
        conf={"spark.driver.extraJavaOptions": options},
    )
    rows = 4_000
    table = pa.table(
        {
            "key": pa.array([f"k{i % 7}" for i in range(rows)]),
            "hour": pa.array([i % 24 for i in range(rows)], pa.int64()),
            "value": pa.array([None if i % 5 == 0 else i * 0.5 for i in range(rows)]),
        }
    )
    with tempfile.TemporaryDirectory(prefix="reactive-aio-archive-") as folder:
        spark.createDataFrame(table).write.parquet(f"{folder}/t")
        spark.read.parquet(f"{folder}/t").createOrReplaceTempView("t")
        spark.sql(
            "SELECT key, hour, first(value) AS first, count(*) AS n, "
            "sum(CASE WHEN value IS NULL THEN 1 ELSE 0 END) AS missing, "
            "count(value) AS counted, sum(value) AS total FROM t GROUP BY key, hour"
        ).toArrow()
    spark.stop()
    gateway = SparkContext._gateway
    process = getattr(gateway, "proc", None)
    if process is not None:
        # The JVM exits once its stdin closes (and writes the archive then): wait for it.
        process.stdin.close()
        process.wait()


if __name__ == "__main__":
    _representative_job(sys.argv[1], Path(sys.argv[2]))
