"""A throwaway Spark standalone cluster on 127.0.0.1: one master and N workers, each its own JVM.

It uses the installed PySpark's own ``bin/spark-class``, so no separate Spark download is
needed. Ports are picked free, memory is kept small, `StandaloneCluster.start` returns once
every worker has registered with the master, and `StandaloneCluster.stop` ends exactly the
processes it started.

Example:
    with StandaloneCluster(workers=2) as cluster:
        spark = spark_session(cluster.master_url)
"""

from __future__ import annotations

__all__ = ("StandaloneCluster",)

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import IO, Any, final

import attrs

from ._session import _log4j2_file


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _spark_home() -> Path:
    from pyspark.find_spark_home import _find_spark_home

    return Path(_find_spark_home())


@final
@attrs.define(eq=False)
class StandaloneCluster:
    """A standalone master and workers on the loopback interface.

    Use it as a context manager, or call `start` and `stop`.
    """

    workers: int = 2
    """Number of worker JVMs."""
    worker_cores: int = 1
    """Cores each worker offers."""
    worker_memory: str = "1g"
    """Memory each worker offers to executors (an executor takes ``spark.executor.memory``)."""
    startup_timeout: float = 120.0
    """Seconds to wait for the master and every worker to come up."""
    master_url: str = attrs.field(init=False, default="")
    """``spark://127.0.0.1:PORT`` once started."""
    web_url: str = attrs.field(init=False, default="")
    """The master's web UI (its ``/json/`` view is how registration is checked)."""
    log_dir: Path = attrs.field(init=False, factory=lambda: Path(tempfile.mkdtemp(prefix="spark-")))
    """Each JVM's output goes to a file here."""
    _processes: list[subprocess.Popen[bytes]] = attrs.field(init=False, factory=list)
    _logs: list[IO[bytes]] = attrs.field(init=False, factory=list)

    def __enter__(self) -> StandaloneCluster:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        quiet = f"-Dlog4j2.configurationFile=file:{_log4j2_file()}"
        env.update(
            SPARK_HOME=str(_spark_home()),
            SPARK_LOCAL_IP="127.0.0.1",
            SPARK_DAEMON_MEMORY="256m",
            SPARK_DAEMON_JAVA_OPTS=quiet,
            SPARK_WORKER_DIR=str(self.log_dir / "work"),
            PYSPARK_PYTHON=sys.executable,
        )
        return env

    def _launch(self, name: str, *args: str) -> subprocess.Popen[bytes]:
        log = (self.log_dir / f"{name}.log").open("wb")
        self._logs.append(log)
        spark_class = _spark_home() / "bin" / "spark-class"
        process = subprocess.Popen(
            [str(spark_class), *args],
            env=self._env(),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # its own process group, so stop() reaches the JVM child
        )
        self._processes.append(process)
        return process

    def _status(self) -> dict[str, Any] | None:
        try:
            with urllib.request.urlopen(f"{self.web_url}/json/", timeout=2) as response:
                status: dict[str, Any] = json.load(response)
                return status
        except (OSError, ValueError):
            return None

    def start(self) -> StandaloneCluster:
        """Start the master and the workers; return once all workers are registered.

        Raises:
            RuntimeError: a JVM exited or the cluster did not come up in time; the message
                points at the log files.
        """
        if self._processes:
            return self
        port, web = _free_port(), _free_port()
        self.master_url = f"spark://127.0.0.1:{port}"
        self.web_url = f"http://127.0.0.1:{web}"
        self._launch(
            "master",
            "org.apache.spark.deploy.master.Master",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--webui-port",
            str(web),
        )
        for index in range(self.workers):
            self._launch(
                f"worker-{index}",
                "org.apache.spark.deploy.worker.Worker",
                self.master_url,
                "--host",
                "127.0.0.1",
                "--port",
                str(_free_port()),
                "--webui-port",
                str(_free_port()),
                "--cores",
                str(self.worker_cores),
                "--memory",
                self.worker_memory,
                "--work-dir",
                str(self.log_dir / f"work-{index}"),
            )
        try:
            self._wait_for_workers()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_for_workers(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        delay = 0.1
        while time.monotonic() < deadline:
            for process in self._processes:
                if process.poll() is not None:
                    raise RuntimeError(
                        f"a Spark JVM exited with {process.returncode}; see {self.log_dir}"
                    )
            status = self._status()
            if status is not None:
                alive = [w for w in status.get("workers", []) if w.get("state") == "ALIVE"]
                if len(alive) >= self.workers:
                    return
            # Polling an HTTP status page: back off instead of spinning.
            time.sleep(delay)
            delay = min(delay * 2, 1.0)
        raise RuntimeError(
            f"{self.workers} workers did not register within {self.startup_timeout} s; "
            f"see {self.log_dir}"
        )

    def stop(self) -> None:
        """Stop every JVM this cluster started (workers first); idempotent."""
        for process in reversed(self._processes):
            if process.poll() is None:
                try:
                    os.killpg(process.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for process in reversed(self._processes):
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                process.wait(timeout=10)
        self._processes.clear()
        for log in self._logs:
            log.close()
        self._logs.clear()
