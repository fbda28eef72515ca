"""spark_session's local defaults, observed from inside a Python task."""

from __future__ import annotations

from typing import Any


def test_local_workers_start_with_the_spark_files_directory_on_their_path(spark: Any) -> None:
    # A worker that has to add it to sys.path calls importlib.invalidate_caches(), which
    # rereads pyspark.zip before Python 3.12: about a second before its task starts.
    from pyspark import SparkFiles

    def worker_path(_: Any) -> Any:
        import os

        yield os.environ.get("PYTHONPATH", "").split(os.pathsep)

    [inherited] = spark.sparkContext.parallelize([0], 1).mapPartitions(worker_path).collect()
    assert SparkFiles.getRootDirectory() in inherited


def test_a_local_session_runs_its_jvm_with_the_client_compiler_and_the_serial_collector(
    spark: Any,
) -> None:
    # A short job on a cold JVM pays C2's compiler threads and G1's housekeeping as much CPU
    # as its work, on the same few cores.
    jvm = spark.sparkContext._jvm
    diagnostics = jvm.com.sun.management.HotSpotDiagnosticMXBean._java_lang_class
    bean = jvm.java.lang.management.ManagementFactory.getPlatformMXBean(diagnostics)
    assert bean.getVMOption("TieredStopAtLevel").getValue() == "1"
    assert bean.getVMOption("UseSerialGC").getValue() == "true"


def test_session_settings_are_the_ones_the_session_runs_with(spark: Any) -> None:
    # A session built by hand (the pipeline benchmark's floor) gets the same options from it.
    from reactive_aio.spark import session_settings

    settings = session_settings("local[2]", {"spark.sql.shuffle.partitions": "3"})
    assert settings["spark.sql.shuffle.partitions"] == "3"  # the caller's conf wins
    running = spark.sparkContext.getConf()
    for key in ("spark.driver.memory", "spark.ui.enabled", "spark.python.daemon.module"):
        assert running.get(key) == settings[key], key
    # (Spark puts options of its own before the driver's)
    assert running.get("spark.driver.extraJavaOptions").endswith(
        settings["spark.driver.extraJavaOptions"]
    )
    assert session_settings("spark://10.0.0.1:7077").get("spark.driver.memory") is None
