"""Throwaway Spark services on 127.0.0.1, started from the installed PySpark's own scripts and jars.

`StandaloneCluster` is one master and N workers, each its own JVM (``bin/spark-class``).
`SparkConnectServer` is a Spark Connect server (``sbin/start-connect-server.sh``, whose jar
ships in the PySpark wheel). No separate Spark download is needed. Ports are picked free,
memory is kept small, ``start`` returns once the service answers, and ``stop`` ends exactly
the processes it started (each runs in its own process group, so the JVM a launcher script
forks is reached too) and removes the temporary directory that held their logs, work and
scratch files.

Example:
    with StandaloneCluster(workers=2) as cluster:
        spark = spark_session(cluster.master_url)

    with SparkConnectServer() as server:
        spark = spark_session(server.url)
"""

from __future__ import annotations

__all__ = ("SparkConnectServer", "StandaloneCluster")

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any, final

import attrs

from ._session import _local_defaults, _log4j2_file


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
class _ProcessGroups:
    """Processes started in their own process groups, each logging to a file in one directory."""

    prefix: str
    directory: Path | None = attrs.field(init=False, default=None)
    _processes: list[subprocess.Popen[bytes]] = attrs.field(init=False, factory=list)
    _logs: list[IO[bytes]] = attrs.field(init=False, factory=list)

    @property
    def started(self) -> bool:
        return bool(self._processes)

    def open(self) -> Path:
        """Create the directory the processes write to."""
        self.directory = Path(tempfile.mkdtemp(prefix=self.prefix))
        return self.directory

    def env(self) -> dict[str, str]:
        """The environment every process gets: Spark's home, loopback, quiet logs, our Python."""
        assert self.directory is not None
        quiet = f"-Dlog4j2.configurationFile=file:{_log4j2_file()}"
        return dict(
            os.environ,
            SPARK_HOME=str(_spark_home()),
            SPARK_LOCAL_IP="127.0.0.1",
            # Scratch space (block managers, shuffle files) inside the directory removed at stop.
            SPARK_LOCAL_DIRS=str(self.directory / "local"),
            SPARK_DAEMON_JAVA_OPTS=quiet,
            PYSPARK_PYTHON=sys.executable,
        )

    def launch(self, name: str, argv: list[str], env: Mapping[str, str]) -> None:
        assert self.directory is not None
        log = (self.directory / f"{name}.log").open("wb")
        self._logs.append(log)
        self._processes.append(
            subprocess.Popen(
                argv,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # its own process group: stop() reaches the forked JVM
            )
        )

    def wait_until(self, ready: Callable[[], bool], timeout: float, what: str) -> None:
        """Poll *ready* (backing off) until it holds; fail early if a process exited."""
        deadline = time.monotonic() + timeout
        delay = 0.1
        while time.monotonic() < deadline:
            for process in self._processes:
                if process.poll() is not None:
                    raise RuntimeError(
                        f"a Spark JVM exited with {process.returncode} before {what}:\n"
                        + self.log_tail()
                    )
            if ready():
                return
            time.sleep(delay)
            delay = min(delay * 2, 1.0)
        raise RuntimeError(f"{what} did not happen within {timeout} s:\n" + self.log_tail())

    def log_tail(self, lines: int = 20) -> str:
        """The last lines of every log: the directory is removed at stop, so errors carry them."""
        if self.directory is None:
            return ""
        parts = []
        for log in sorted(self.directory.glob("*.log")):
            # Stack frames would crowd out the lines that say what went wrong.
            text = log.read_text(errors="replace").splitlines()
            tail = [line for line in text if not line.startswith("\tat ")][-lines:]
            parts.append(f"--- {log.name}\n" + "\n".join(tail))
        return "\n".join(parts)

    def stop(self) -> None:
        """End every process (last started first), then remove the directory; idempotent."""
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
            # The launcher exiting does not mean its group did: a forked JVM may still be
            # shutting down and writing to the directory about to be removed.
            _wait_for_group(process.pid)
        self._processes.clear()
        for log in self._logs:
            log.close()
        self._logs.clear()
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None


def _wait_for_group(pgid: int, timeout: float = 20.0) -> None:
    """Wait until no process of group *pgid* is left, killing it after *timeout*."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        except PermissionError:  # the id was reused by someone else's group
            return
        if time.monotonic() > deadline:
            try:
                os.killpg(pgid, signal.SIGKILL)
            except ProcessLookupError:
                return
            deadline = time.monotonic() + timeout
        time.sleep(0.05)


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
    _group: _ProcessGroups = attrs.field(init=False, factory=lambda: _ProcessGroups("spark-"))

    @property
    def log_dir(self) -> Path | None:
        """Where each JVM's output, the workers' and executors' files go, while running."""
        return self._group.directory

    def __enter__(self) -> StandaloneCluster:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _status(self) -> dict[str, Any] | None:
        try:
            with urllib.request.urlopen(f"{self.web_url}/json/", timeout=2) as response:
                status: dict[str, Any] = json.load(response)
                return status
        except (OSError, ValueError):
            return None

    def _all_registered(self) -> bool:
        status = self._status()
        if status is None:
            return False
        alive = [w for w in status.get("workers", []) if w.get("state") == "ALIVE"]
        return len(alive) >= self.workers

    def start(self) -> StandaloneCluster:
        """Start the master and the workers; return once all workers are registered.

        Raises:
            RuntimeError: a JVM exited or the cluster did not come up in time; the message
                carries the end of each log.
        """
        if self._group.started:
            return self
        directory = self._group.open()
        env = self._group.env()
        env["SPARK_DAEMON_MEMORY"] = "256m"  # master and workers; executors get worker_memory
        spark_class = str(_spark_home() / "bin" / "spark-class")
        port, web = _free_port(), _free_port()
        self.master_url = f"spark://127.0.0.1:{port}"
        self.web_url = f"http://127.0.0.1:{web}"
        try:
            self._group.launch(
                "master",
                [
                    spark_class,
                    "org.apache.spark.deploy.master.Master",
                    *("--host", "127.0.0.1", "--port", str(port), "--webui-port", str(web)),
                ],
                env,
            )
            for index in range(self.workers):
                self._group.launch(
                    f"worker-{index}",
                    [
                        spark_class,
                        "org.apache.spark.deploy.worker.Worker",
                        self.master_url,
                        *("--host", "127.0.0.1", "--port", str(_free_port())),
                        *("--webui-port", str(_free_port()), "--cores", str(self.worker_cores)),
                        *("--memory", self.worker_memory),
                        *("--work-dir", str(directory / f"work-{index}")),
                    ],
                    env,
                )
            self._group.wait_until(
                self._all_registered,
                self.startup_timeout,
                f"{self.workers} workers registered with the master",
            )
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop every JVM this cluster started (workers first) and remove its files; idempotent."""
        self._group.stop()


@final
@attrs.define(eq=False)
class SparkConnectServer:
    """A Spark Connect server on 127.0.0.1, running its own Spark (``local[2]`` by default).

    Use it as a context manager, or call `start` and `stop`. Clients connect to `url`.
    """

    master: str = "local[2]"
    """The master the server's Spark runs on (a ``spark://`` URL puts it on a cluster)."""
    conf: Mapping[str, str] = attrs.field(factory=dict)
    """Extra Spark settings for the server; they override the local defaults of `spark_session`."""
    startup_timeout: float = 120.0
    """Seconds to wait for the server to accept connections."""
    url: str = attrs.field(init=False, default="")
    """``sc://127.0.0.1:PORT`` once started."""
    port: int = attrs.field(init=False, default=0)
    _group: _ProcessGroups = attrs.field(
        init=False, factory=lambda: _ProcessGroups("spark-connect-")
    )

    @property
    def log_dir(self) -> Path | None:
        """Where the server's log and scratch files go, while running."""
        return self._group.directory

    @property
    def pid(self) -> int | None:
        """The process id (and process group id) of the server's launcher, while running."""
        processes = self._group._processes
        return processes[0].pid if processes else None

    def __enter__(self) -> SparkConnectServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _accepts(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return True
        except OSError:
            return False

    def start(self) -> SparkConnectServer:
        """Start the server; return once it accepts connections on `url`.

        Raises:
            RuntimeError: the server exited or did not come up in time; the message carries
                the end of its log.
        """
        if self._group.started:
            return self
        directory = self._group.open()
        self.port = _free_port()
        self.url = f"sc://127.0.0.1:{self.port}"
        settings = _local_defaults(self.master)
        settings.update(
            {
                "spark.connect.grpc.binding.address": "127.0.0.1",
                "spark.connect.grpc.binding.port": str(self.port),
                "spark.local.dir": str(directory / "local"),
            }
        )
        settings.update(self.conf)
        env = self._group.env()
        # --wait keeps the server in the foreground (no pid file, no daemon), so the process
        # started here is the one to stop; the log and pid directories stay in ours.
        env.update(
            # The launcher sizes the server's heap as a daemon's, not from spark.driver.memory.
            SPARK_DAEMON_MEMORY=settings.get("spark.driver.memory", "1g"),
            SPARK_NO_DAEMONIZE="1",
            SPARK_LOG_DIR=str(directory),
            SPARK_PID_DIR=str(directory),
            SPARK_IDENT_STRING=f"reactive_aio-{os.getpid()}-{self.port}",
        )
        argv = [str(_spark_home() / "sbin" / "start-connect-server.sh"), "--wait"]
        argv += ["--master", self.master]
        for key, value in settings.items():
            argv += ["--conf", f"{key}={value}"]
        try:
            self._group.launch("connect", argv, env)
            self._group.wait_until(
                self._accepts, self.startup_timeout, f"the Connect server listening on {self.url}"
            )
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop the server this object started and remove its files; idempotent."""
        self._group.stop()
