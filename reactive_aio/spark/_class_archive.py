"""A class-data-sharing archive of a local Spark driver (JDK 17's dynamic AppCDS).

A local session's JVM spends most of its start, and most of its first query, loading and
verifying Spark's classes: on a 2-core machine a session starts in ~10 s and the reference
pipeline's first aggregate takes ~9 s cold. Mapped from an archive that a representative job
dumped once, those classes load in about half the time. `build_class_archive` runs that job
(in a child process, `-XX:ArchiveClassesAtExit`), checks the result by starting a session on
it with ``-Xshare:on`` (a truncated archive crashes a JVM that maps it: it is never put in
place), and renames it into the cache under a key of the Java binary, PySpark's version and
jars and the JVM options. `spark_session` maps the archive of its key when there is one;
without one, or with one the JVM turns down, it starts as before.
"""

from __future__ import annotations

__all__ = ("archive_options", "build_class_archive", "class_archive")

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TextIO

_QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"
"""An archive is an optimisation: one the JVM turns down (another classpath) is not a warning."""


def _cache() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "reactive_aio"


def _java() -> Path | None:
    """The java that PySpark's launcher runs: ``$JAVA_HOME/bin/java``, else the one on PATH."""
    home = os.environ.get("JAVA_HOME")
    found = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    return Path(found).resolve() if found and Path(found).exists() else None


def class_archive(jvm_options: str) -> Path:
    """Where the archive for a driver started with *jvm_options* is kept (it may not exist)."""
    import pyspark

    digest = hashlib.sha256(jvm_options.encode())
    java = _java()
    if java is not None:
        stat = java.stat()
        digest.update(f"{java}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    # The archive holds the classpath it was made with: each installation has its own.
    jars = Path(pyspark.__file__).parent / "jars"
    digest.update(str(jars).encode())
    for jar in sorted(jars.iterdir()) if jars.is_dir() else ():
        digest.update(jar.name.encode())
    return _cache() / f"spark-{pyspark.__version__}-{digest.hexdigest()[:16]}.jsa"


def archive_options(path: Path) -> str:
    """The driver options that map *path*."""
    return f" -XX:SharedArchiveFile={path} {_QUIET}"


def build_class_archive(*, timeout: float = 900, log: TextIO | None = None) -> Path | None:
    """Make the archive a local `spark_session` maps (once; idempotent); return its path, or
    None where there is no Java to make it with.

    Takes about three times a session's start: a job, then a session that checks the
    archive; *log* gets a line before it starts. Raises `RuntimeError` if either child fails
    (nothing is put in place).
    """
    from ._session import local_driver_options

    if _java() is None:
        return None
    final = class_archive(local_driver_options(archive=False))
    if final.exists():
        return final
    if log is not None:
        print(f"making the class archive of a local Spark session: {final}", file=log)
    final.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f"{final.stem}.", suffix=".tmp", dir=final.parent)
    os.close(fd)
    candidate = Path(name)
    candidate.unlink()  # the JVM writes it at its exit
    try:
        _child("dump", candidate, timeout)
        if not candidate.exists():
            raise RuntimeError("the JVM wrote no class archive at its exit")
        _child("check", candidate, timeout)
        os.replace(candidate, final)
    finally:
        candidate.unlink(missing_ok=True)
        _crash_log(candidate).unlink(missing_ok=True)
    return final


def _crash_log(archive: Path) -> Path:
    """Where a JVM that crashed on *archive* wrote its report (not the working directory)."""
    return archive.with_name(f"{archive.name}.crash.log")


def _child(step: str, archive: Path, timeout: float) -> None:
    done = subprocess.run(
        [sys.executable, "-m", __name__, step, str(archive)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"class archive: the {step} step failed: {done.stderr[-2000:]}")


def _representative_job(step: str, archive: Path) -> None:
    """In a child: a session whose JVM dumps (or, with ``-Xshare:on``, must map) *archive*,
    running what local jobs run first: Arrow in, Spark's Parquet writer and reader, a SQL
    aggregate with its code generation, Arrow out. The JVM exits before this returns."""
    import pyarrow as pa
    from pyspark import SparkContext

    from ._session import local_driver_options, spark_session

    options = local_driver_options(archive=False)
    if step == "dump":
        options += f" -XX:ArchiveClassesAtExit={archive}"
    else:
        options += (
            f" -Xshare:on -XX:SharedArchiveFile={archive}"
            f" -XX:ErrorFile={_crash_log(archive)} -XX:-CreateCoredumpOnCrash"
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
