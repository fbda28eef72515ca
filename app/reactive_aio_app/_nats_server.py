"""``reactive-aio nats-server``: the nats extra's server with JetStream, on 127.0.0.1, until
Ctrl-C.

The server is `reactive_aio.connectors.servers.LocalNatsServer` (what the tests use), kept
in a store the user names and finds again. It runs in a session of its own, so Ctrl-C in the
terminal reaches only this process, which then stops the server by its pid: the server is
never left running without the command that started it, whichever signal ends it.
"""

from __future__ import annotations

__all__ = ("run_nats_server",)

import errno
import signal
import subprocess
import sys
from pathlib import Path
from types import FrameType


def run_nats_server(port: int, store: Path, prog: str) -> int:
    """Run the server until SIGINT or SIGTERM; returns the exit status (see ``--help``)."""
    from reactive_aio.connectors.servers import LocalNatsServer

    if store.exists() and not store.is_dir():
        print(
            f"{prog}: error: argument --store: {store} is a file; name a directory", file=sys.stderr
        )
        return 2
    try:
        LocalNatsServer.executable()
    except FileNotFoundError as exc:
        print(f"{prog}: error: {exc} (pip install 'reactive_aio[nats]')", file=sys.stderr)
        return 2
    store = store.absolute()  # created by the server's start, once the port proved free
    server = LocalNatsServer(port=port, directory=store, keep=True)
    received: list[int] = []

    def stop(signum: int, frame: FrameType | None) -> None:
        received.append(signum)

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, stop)
    try:
        server.start()
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE:
            raise
        print(
            f"{prog}: error: argument --port: {exc.strerror} (another nats-server?); "
            "use that server, or start this one with another --port",
            file=sys.stderr,
        )
        return 2
    except RuntimeError as exc:  # it exited while starting: its log's last line says why
        print(
            f"{prog}: error: {str(exc).splitlines()[-1]} (log: {store / 'nats.log'})",
            file=sys.stderr,
        )
        return 1
    print(
        f"nats-server with JetStream listening on {server.url}, store in {store}\n"
        f"publish with:  reactive-aio publish --to {server.url}/flights\n"
        f"consume with:  reactive-aio pipeline --source {server.url}/flights\n"
        "Ctrl-C stops it (the store is kept)",
        flush=True,
    )
    assert server.process is not None
    try:
        while not received:
            try:
                server.process.wait(0.25)
            except subprocess.TimeoutExpired:
                continue
            print(
                f"{prog}: error: nats-server exited with {server.process.returncode}; "
                f"see {store / 'nats.log'}",
                file=sys.stderr,
            )
            return 1
    finally:
        server.stop()
    print(f"nats-server stopped; the store stays in {store}", flush=True)
    return 0
