"""Build a SparkSession with quiet, fast defaults for local work and the cluster options.

Local mode is what tests and the pipeline run on by default, so the defaults aim at a
short startup and a silent console: no web UI, no progress bar, log level ERROR from the
first line the JVM prints (a log4j2 file passed to the driver JVM, not just
``setLogLevel`` afterwards), few shuffle partitions, Arrow on, the driver bound to the
loopback address, and a JVM tuned for short jobs (the client JIT compiler alone, the serial
garbage collector).
"""

from __future__ import annotations

__all__ = (
    "build_class_archive",
    "is_connect",
    "local_driver_options",
    "session_settings",
    "spark_session",
)

import os
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from ._class_archive import archive_options, build, class_archive

_LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
logger.jetty.name = org.sparkproject.jetty
logger.jetty.level = error
logger.parquet.name = org.apache.parquet
logger.parquet.level = error
# An interactive driver (PySpark counts as one) prints "Setting default log level" unless
# the class that starts it has its own level equal to the root's.
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = error
logger.submit.name = org.apache.spark.deploy.SparkSubmit
logger.submit.level = error
# A cancelled job makes these log whole stack traces at ERROR; the caller already gets the error.
logger.utils.name = org.apache.spark.util.Utils
logger.utils.level = fatal
logger.tsm.name = org.apache.spark.scheduler.TaskSetManager
logger.tsm.level = fatal
"""


_LOCAL_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
"""JIT and GC options of a local session's JVM (see `_local_defaults`)."""


def _log4j2_file() -> Path:
    """Write (once per user) the log4j2 configuration that keeps the driver quiet."""
    path = Path(tempfile.gettempdir()) / f"reactive_aio-log4j2-{os.getuid()}.properties"
    if not path.exists() or path.read_text() != _LOG4J2:
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(_LOG4J2)
        tmp.replace(path)  # atomic, so concurrent starters never read half a file
    return path


def local_driver_options(*, archive: bool = True) -> str:
    """The options of a local session's JVM (the driver, which runs the tasks too): the log
    configuration, `_LOCAL_JVM_OPTIONS` and, with *archive*, the class archive of these
    options if `build_class_archive` made one."""
    options = f"{_log_option()} {_LOCAL_JVM_OPTIONS}"
    if archive:
        path = class_archive(options)
        if path.exists():
            options += archive_options(path)
    return options


def build_class_archive(*, timeout: float = 900, log: TextIO | None = None) -> Path | None:
    """Make the class archive a local `spark_session` maps (once; idempotent); return its
    path, or None where there is no Java to make it with (see the Spark guide).

    Takes about three times a session's start: a job, then a session that checks the
    archive; *log* gets a line before it starts. Raises `RuntimeError` if either child fails
    (nothing is put in place).
    """
    return build(local_driver_options(archive=False), timeout=timeout, log=log)


def _log_option() -> str:
    return f"-Dlog4j2.configurationFile=file:{_log4j2_file()}"


def _local_defaults(master: str) -> dict[str, str]:
    cores = os.cpu_count() or 2
    log_opt = _log_option()
    conf = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.execution.arrow.pyspark.fallback.enabled": "false",
        "spark.driver.extraJavaOptions": log_opt,
        "spark.executor.extraJavaOptions": log_opt,
        "spark.pyspark.python": sys.executable,
        "spark.pyspark.driver.python": sys.executable,
        # Cancelling a job interrupts its task threads instead of letting them run on.
        "spark.sql.legacy.interruptOnCancel": "true",
    }
    if master.startswith(("local", "spark://127.", "spark://localhost")):
        conf["spark.driver.host"] = "127.0.0.1"
        conf["spark.driver.bindAddress"] = "127.0.0.1"
    if master.startswith("local"):
        # The driver JVM runs the tasks too. A local job is short and its JVM cold: C2's
        # compiler threads and G1's housekeeping cost about as much CPU as the work itself,
        # on the same few cores. The client compiler alone and the serial collector halve
        # a session's start and its first query (and the pipeline) on a 2-core machine; a
        # long CPU-bound local job may want C2 back through *conf*. Spark's classes come from
        # a class archive when there is one (`build_class_archive`).
        conf["spark.driver.extraJavaOptions"] = local_driver_options()
        # The default of 200 shuffle partitions costs ~0.1 s of scheduling per shuffle locally.
        conf["spark.sql.shuffle.partitions"] = str(max(2, 2 * cores))
        conf["spark.default.parallelism"] = str(max(2, cores))
        # At 1g, a partition of ~100 MB of Arrow results can be evicted before the driver
        # fetches it (TaskResultLost); local executors share the driver's heap.
        conf["spark.driver.memory"] = "2g"
        # Local workers run this interpreter: fork them from a daemon that has compiled
        # pyspark.worker already (see _daemon), reachable on their path.
        conf["spark.python.daemon.module"] = "reactive_aio.spark._daemon"
        conf["spark.executorEnv.PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    return conf


def session_settings(
    master: str = "local[*]", conf: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The Spark settings `spark_session` builds a classic session on *master* with: the
    defaults described in the module, then *conf*. For a session built another way (a
    ``SparkSession.builder`` of one's own, ``spark-submit --conf``) with the same options."""
    settings = _local_defaults(master)
    settings.update(conf or {})
    return settings


def is_connect(spark: Any) -> bool:
    """Tell whether *spark* is a Spark Connect session rather than a classic (py4j) one."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def spark_session(
    master: str = "local[*]",
    *,
    app_name: str = "reactive_aio",
    connect_url: str | None = None,
    conf: Mapping[str, str] | None = None,
) -> Any:
    """Get or create a SparkSession.

    Args:
        master: ``local[*]`` / ``local[N]`` (default), ``spark://host:port`` for a standalone
            cluster, ``yarn`` (needs ``HADOOP_CONF_DIR`` or ``YARN_CONF_DIR``), or an
            ``sc://host:port`` URL, which is the same as passing *connect_url*.
        app_name: Name shown by the cluster manager.
        connect_url: A Spark Connect URL (``sc://host:15002``); the session is then a thin
            gRPC client built with ``SparkSession.builder.remote`` and *master* is ignored.
            Needs ``pyspark[connect]``.
        conf: Extra Spark settings; they override the defaults described in the module.

    Returns:
        A ``pyspark.sql.SparkSession`` (classic or Connect). If a session already exists in
        this process it is returned, with *conf* applied where Spark allows it at runtime.
    """
    from pyspark.sql import SparkSession

    if master.startswith("sc://") and connect_url is None:
        connect_url = master
    if connect_url is not None:
        builder = SparkSession.builder.remote(connect_url).appName(app_name)
        for key, value in (conf or {}).items():
            builder = builder.config(key, value)
        return builder.getOrCreate()

    # The driver and Python workers must agree on the interpreter, and a laptop with VPN
    # interfaces must not advertise an address the local executors cannot reach.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if master.startswith(("local", "spark://127.", "spark://localhost")):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in session_settings(master, conf).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    if master.startswith("local"):
        _spark_files_on_worker_path(spark.sparkContext)
    return spark


def _spark_files_on_worker_path(sc: Any) -> None:
    """Start local Python workers with the SparkFiles directory already on ``sys.path``.

    A fresh worker puts that directory on its path and, when that changes the path, calls
    ``importlib.invalidate_caches()``. Before Python 3.12 this rereads the whole directory
    of ``pyspark.zip`` once for every PySpark package imported from it: about a second of
    CPU before every fresh worker runs its task (a read right after a cancelled one, whose
    worker is never reused, waited for it). A worker that inherits the directory from the
    daemon finds its path unchanged and invalidates nothing. Local executors use the
    driver's files directory. PySpark starts a daemon per distinct worker environment, so
    set before a session's first Python task this reaches every worker of the session.
    """
    from pyspark import SparkFiles

    files = SparkFiles.getRootDirectory()
    paths = [path for path in sc.environment.get("PYTHONPATH", "").split(os.pathsep) if path]
    if files not in paths:
        sc.environment["PYTHONPATH"] = os.pathsep.join([*paths, files])
