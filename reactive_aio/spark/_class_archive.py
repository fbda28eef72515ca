"""A class-data-sharing archive of a local Spark driver (JDK 17's dynamic AppCDS).

A local session's JVM spends most of its start, and most of its first query, loading and
verifying Spark's classes: on a 2-core machine a session starts in ~10 s and the reference
pipeline's first aggregate takes ~9 s cold. Mapped from an archive that a representative job
dumped once, those classes load in about half the time. `build_class_archive` runs that job
(`_class_archive_job`, in a child process, `-XX:ArchiveClassesAtExit`), checks the result by starting a session on
it with ``-Xshare:on`` (a truncated archive crashes a JVM that maps it: it is never put in
place), and renames it into the cache under a key of the Java binary, PySpark's version and
jars and the JVM options. `spark_session` maps the archive of its key when there is one;
without one, or with one the JVM turns down, it starts as before.
"""

from __future__ import annotations

__all__ = ("archive_options", "build", "class_archive", "crash_log")

import hashlib
import os
import shutil
import subprocess
import sys
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


def build(jvm_options: str, *, timeout: float, log: TextIO | None) -> Path | None:
    """`build_class_archive` for a driver started with *jvm_options*."""
    if _java() is None:
        return None
    final = class_archive(jvm_options)
    if final.exists():
        return final
    if log is not None:
        print(f"making the class archive of a local Spark session: {final}", file=log)
    final.parent.mkdir(parents=True, exist_ok=True)
    # The JVM writes it at its exit; a name of this process's own, beside the final one.
    candidate = final.with_name(f"{final.name}.{os.getpid()}.tmp")
    try:
        _child("dump", candidate, timeout)
        if not candidate.exists():
            raise RuntimeError("the JVM wrote no class archive at its exit")
        _child("check", candidate, timeout)
        os.replace(candidate, final)
    finally:
        candidate.unlink(missing_ok=True)
        crash_log(candidate).unlink(missing_ok=True)
    return final


def crash_log(archive: Path) -> Path:
    """Where a JVM that crashed on *archive* wrote its report (not the working directory)."""
    return archive.with_name(f"{archive.name}.crash.log")


def _child(step: str, archive: Path, timeout: float) -> None:
    """Run the representative job's *step* (``dump`` or ``check``) in a child process."""
    done = subprocess.run(
        [sys.executable, "-m", "reactive_aio.spark._class_archive_job", step, str(archive)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"class archive: the {step} step failed: {done.stderr[-2000:]}")
