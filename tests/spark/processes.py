"""Killing a driver process the way a crash does, and waiting until its JVM is gone too."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any


def descendants(pid: int) -> list[int]:
    """Every process below *pid* (Linux: read from /proc)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            children = (task / "children").read_text().split()
        except OSError:
            continue
        for child in map(int, children):
            found += [child, *descendants(child)]
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


def kill_hard(process: subprocess.Popen[Any], timeout: float = 60.0) -> None:
    """SIGKILL *process*; then wait for the processes it started (the Spark JVM notices its
    driver is gone and exits) and kill any that outlive *timeout*."""
    below = descendants(process.pid)
    process.send_signal(signal.SIGKILL)
    process.wait()
    deadline = time.monotonic() + timeout
    while any(_alive(pid) for pid in below) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in below:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


def crash_when(
    command: Sequence[str],
    env: Mapping[str, str],
    log: Path,
    ready: Callable[[], bool],
    *,
    timeout: float = 300.0,
) -> None:
    """Run *command* (its output in *log*) and kill it with SIGKILL as soon as *ready()*."""
    with log.open("w") as output:
        process = subprocess.Popen(command, env=env, stdout=output, stderr=output)
    deadline = time.monotonic() + timeout
    while not ready():
        assert process.poll() is None, log.read_text()[-3000:]
        assert time.monotonic() < deadline, f"not ready after {timeout} s: {command}"
        time.sleep(0.05)
    kill_hard(process)
