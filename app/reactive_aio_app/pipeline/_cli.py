"""``reactive-aio pipeline`` and ``reactive-aio aggregate`` as a user meets them: checks first,
a log per run, one-line errors, and Ctrl-C that stops cleanly.

- Every option is checked before Spark starts (`._checks`); a mistake exits 2 with one line.
  So is the output folder: one that workers use refuses a run that is no worker, and the
  reverse (`._outputs`); an aggregate refuses while the consumer still owes messages.
- Each run keeps a log in ``OUT/logs/``, named after its time, command, host and pid (workers
  on several machines log into one folder): the command, the phases, Spark's own console
  output (the JVM writes to file descriptor 2, which points at the log for the run) and, when
  the run fails, the traceback. The terminal gets one line naming what failed, what to check
  and the log's path; ``--debug`` leaves Spark's output on the terminal and prints the
  traceback too.
- Ctrl-C (or SIGTERM) while streaming stops the source; the sink commits the batch it holds,
  the run prints what landed and exits 130 (143). A second Ctrl-C, or one in any other phase,
  aborts: the batch in flight does not commit, the results of earlier runs stay as they were.
"""

from __future__ import annotations

__all__ = ("run", "run_aggregate", "run_publish")

import argparse
import asyncio
import contextlib
import datetime as dt
import os
import re
import shlex
import signal
import socket
import sys
import traceback
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from ._checks import (
    UsageError,
    check_count,
    check_input,
    check_master,
    check_out,
    check_seconds,
    check_source,
    check_target,
)
from ._outputs import OutputBusy, check_output_free, holds_events
from ._progress import Progress
from ._spark import start_early

# What a run needs (the library's streams, pyarrow, the brokers' client: half a second) is
# imported only once Spark is starting (`._spark`), in the functions that need it.
if TYPE_CHECKING:
    from ._results import PipelineResult
    from ._run import PipelineInterrupted
    from ._ui import LivePage

    Job = Callable[[Progress, asyncio.Event], Coroutine[Any, Any, PipelineResult]]
    """What a command runs, given its progress display and the event that stops its stream."""
    Check = Callable[[argparse.Namespace], socket.socket | None]
    """What checks a command's options before it runs; returns the live page's socket, bound."""

_KEEP_LOGS = 20
_REMOTE = ("spark://", "sc://")


def _check(args: argparse.Namespace) -> socket.socket | None:
    """Every option of ``pipeline``, cheapest first, then the live page's socket bound (so a
    port in use is found before Spark starts); raises `UsageError`."""
    check_count("--limit", args.limit, minimum=1, hint="omit it to replay every record")
    check_count("--batch-rows", args.batch_rows, minimum=1, hint="100000 is the default")
    check_seconds("--speed", args.speed, allow_zero=False, hint="omit it to replay at full speed")
    check_seconds(
        "--max-latency", args.max_latency, allow_zero=True, hint="0 waits for full batches"
    )
    _check_shared(args)
    check_seconds("--ack-wait", args.ack_wait, allow_zero=False, hint="30 is the default")
    if args.worker and args.source is None:
        raise UsageError(
            "--worker",
            "a worker consumes a stream, and there is no --source",
            "add the --source nats://HOST:PORT/STREAM the other workers read",
        )
    if args.worker and args.overwrite:
        raise UsageError(
            "--overwrite",
            "a worker lands beside the others, it cannot empty events/ under them",
            "to start over, remove --out once every worker has ended",
        )
    if args.source is not None:
        for option, value in (
            ("--input", args.input),
            ("--limit", args.limit),
            ("--speed", args.speed),
        ):
            if value is not None:
                raise UsageError(
                    option,
                    "replays a file, not a stream",
                    "--source reads what the stream holds, at the pace it comes",
                )
    check_out(args.out)
    if not (args.resume or args.overwrite or args.worker) and holds_events(args.out / "events"):
        raise UsageError(
            "--out",
            f"{args.out / 'events'} holds events an earlier run landed",
            "--resume continues that run, --overwrite replaces it",
        )
    check_input(args.input)
    if not args.worker:  # a worker starts no Spark
        check_master(args.master)
    if args.source is not None:
        check_source(args.source)
    _check_free(args.out, worker=args.worker, joinable=True)
    if args.ui is None:
        return None
    from ._ui import listen

    return listen(args.ui)


def _check_aggregate(args: argparse.Namespace) -> None:  # no live page
    """Every option of ``aggregate``, and that the workers are done; raises `UsageError`."""
    _check_shared(args)
    check_out(args.out)
    check_source(args.source)
    check_master(args.master)
    _check_free(args.out, worker=False, joinable=False)
    from ._aggregate import NotDrained, ready_to_aggregate
    from ._run import OutputExists

    try:
        asyncio.run(ready_to_aggregate(args.out.absolute(), args.source))
    except FileNotFoundError as exc:
        raise UsageError("--out", str(exc), "name the --out the workers landed into") from None
    except OutputExists as exc:
        raise UsageError("--source", str(exc), "name the stream the workers read") from None
    except NotDrained as exc:
        raise UsageError(
            "--out",
            f"some records have not landed yet: {exc}",
            "start a worker (reactive-aio pipeline --worker, with the same --source and --out) "
            "to land them; a killed worker's messages come back after its --ack-wait",
        ) from None
    except LookupError as exc:
        raise UsageError(
            "--out", str(exc), "its records cannot be accounted for: start over into a new --out"
        ) from None


def _check_shared(args: argparse.Namespace) -> None:
    """The options both commands take."""
    check_seconds("--start-timeout", args.start_timeout, allow_zero=False, hint="omit it to wait")
    check_seconds(
        "--progress-every", args.progress_every, allow_zero=False, hint="5 is the default"
    )


def _check_free(out: Path, *, worker: bool, joinable: bool) -> None:
    """Refuse an output folder whose users exclude this run (`OutputBusy`)."""
    try:
        check_output_free(out, worker=worker)
    except OutputBusy as exc:
        if not exc.workers:
            hint = "wait until it has ended"
        elif joinable:
            hint = "add --worker to join them, or wait until every one has ended"
        else:
            hint = "aggregate once every worker has ended"
        raise UsageError("--out", str(exc), hint) from None


def run(args: argparse.Namespace, prog: str) -> int:
    """Run the pipeline command; returns the exit status (see ``--help``)."""

    def job(progress: Progress, stop: asyncio.Event) -> Coroutine[Any, Any, PipelineResult]:
        from ._run import run_pipeline

        return run_pipeline(
            out=args.out.absolute(),
            input_path=args.input,
            master=args.master,
            speed=args.speed,
            limit=args.limit,
            batch_rows=args.batch_rows,
            max_latency=args.max_latency,
            chart=not args.no_chart,
            progress=progress,
            stop=stop,
            start_timeout=args.start_timeout if args.master.startswith(_REMOTE) else None,
            resume=args.resume,
            overwrite=args.overwrite,
            source=args.source,
            ack_wait=args.ack_wait,
            worker=args.worker,
            spark_ui=args.spark_ui,
        )

    rest = (
        "the workers still running, or this one started again, land the rest"
        if args.worker
        else "--resume lands the rest"
    )
    return _command(args, prog, "pipeline", _check, job, rest)


def run_aggregate(args: argparse.Namespace, prog: str) -> int:
    """Run the aggregate command; returns the exit status (see ``--help``)."""

    def job(progress: Progress, stop: asyncio.Event) -> Coroutine[Any, Any, PipelineResult]:
        from ._aggregate import aggregate_output

        return aggregate_output(
            out=args.out.absolute(),
            source=args.source,
            master=args.master,
            chart=not args.no_chart,
            progress=progress,
            start_timeout=args.start_timeout if args.master.startswith(_REMOTE) else None,
            spark_ui=args.spark_ui,
        )

    return _command(args, prog, "aggregate", _check_aggregate, job, "")


def run_publish(args: argparse.Namespace, prog: str) -> int:
    """Run the publish command; returns the exit status (see ``--help``)."""
    from ._broker import publish_flights

    try:
        check_count("--limit", args.limit, minimum=1, hint="omit it to publish every record")
        check_seconds(
            "--progress-every", args.progress_every, allow_zero=False, hint="5 is the default"
        )
        check_input(args.input)
        check_target(args.to)
    except UsageError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    progress = Progress("off") if args.no_progress else Progress.auto(every=args.progress_every)
    try:
        asyncio.run(
            publish_flights(args.to, input_path=args.input, limit=args.limit, progress=progress)
        )
    except KeyboardInterrupt:
        print(
            f"{prog}: interrupted while {progress.phase}; what the stream acknowledged stays "
            "there, and publishing again within its duplicate window (2 minutes) adds only "
            "the rest",
            file=sys.stderr,
        )
        return 130
    except Exception as exc:
        print(
            f"{prog}: error: {progress.phase or 'publishing'} failed: {_reason(exc, None)}; "
            f"check that the NATS server of {args.to} runs and answers",
            file=sys.stderr,
        )
        return 1
    return 0


def _command(
    args: argparse.Namespace,
    prog: str,
    command: str,
    check: Check,
    job: Job,
    rest: str,
) -> int:
    """Check, then run *job* with a log and a progress display, and the live page when
    *check* bound its socket; *rest* says, after an interruption, how what did not land will."""
    try:
        page_socket = check(args)
    except UsageError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # before the run's own handler is installed
        print(f"{prog}: interrupted before the run started; nothing was written", file=sys.stderr)
        return 130
    out: Path = args.out.absolute()
    out.mkdir(parents=True, exist_ok=True)
    log_path = _new_log_path(out / "logs", command)
    with log_path.open("a", encoding="utf-8", buffering=1) as log:
        print(f"$ {shlex.join(sys.argv)}", file=log)
        with _console_into(log, enabled=not args.debug) as terminal:
            progress = Progress.auto(terminal, every=args.progress_every)
            progress.copy_to = log
            if args.no_progress:
                progress.mode = "off"
            page = None
            if page_socket is not None:
                from ._ui import LivePage

                page = LivePage(progress, page_socket)
            return _drive(args, prog, out, progress, log, log_path, terminal, job, rest, page)


def _drive(
    args: argparse.Namespace,
    prog: str,
    out: Path,
    progress: Progress,
    log: TextIO,
    log_path: Path,
    terminal: TextIO,
    job: Job,
    rest: str,
    page: LivePage | None,
) -> int:
    loop = asyncio.new_event_loop()
    if not args.worker:  # a worker starts no Spark
        start_early(loop, args.master, args.spark_ui)
    from ._run import PipelineInterrupted, SparkStartTimeout

    stop = asyncio.Event()
    received: list[int] = []
    if page is not None:
        loop.run_until_complete(page.start())
        progress.say(f"the live page is at {page.url}")
    main = loop.create_task(job(progress, stop))

    def interrupted(signum: int) -> None:
        received.append(signum)
        if len(received) == 1 and progress.streaming:
            stop.set()
            progress.say(
                "stopping: the source is stopped and the batch in flight commits "
                "(Ctrl-C again to abort it)"
            )
        else:
            main.cancel()

    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, interrupted, signum)
    try:
        loop.run_until_complete(main)
    except PipelineInterrupted as stopped:
        _report_stop(stopped, prog, rest)
        code = 128 + received[0]
    except asyncio.CancelledError:
        landed = (
            ""
            if progress.sink is None
            else f"{progress.sink.rows_written:,} records had landed in {out / 'events'}; "
        )
        print(
            f"{prog}: aborted while {progress.phase}; {landed}rejected/, carrier_hourly/ and "
            f"delays.png are as before{rest and '; '}{rest}",
            file=terminal,
        )
        # Spark calls still run in worker threads and cannot be interrupted: leave without them.
        _leave(128 + received[-1], log)
    except SparkStartTimeout as exc:
        print(f"{prog}: error: {exc}", file=log)
        print(
            f"{prog}: error: the master {exc.master} did not accept the application within "
            f"{exc.seconds:g} s; check that it is a Spark master's RPC port (7077 by default) "
            f"with free workers, or raise --start-timeout (details in {log_path})",
            file=terminal,
        )
        _leave(1, log)
    except Exception as exc:
        log.write("".join(traceback.format_exception(exc)))
        if args.debug:
            traceback.print_exception(exc, file=terminal)
        print(
            f"{prog}: error: {progress.phase or 'the run'} failed: {_reason(exc, log_path)}; "
            f"{_what_to_check(exc, out, args.master, args.source)} (details in {log_path}"
            f"{'' if args.debug else ', --debug shows the traceback'})",
            file=terminal,
        )
        code = 1
    else:
        code = 0
        if page is not None:
            _keep_page(loop, page, main.result(), terminal)
    if page is not None:
        loop.run_until_complete(page.close())
    loop.run_until_complete(loop.shutdown_asyncgens())
    loop.run_until_complete(loop.shutdown_default_executor())
    loop.close()
    return code


def _keep_page(
    loop: asyncio.AbstractEventLoop, page: LivePage, result: PipelineResult, terminal: TextIO
) -> None:
    """Show *result* on the page and keep serving it until Ctrl-C (or SIGTERM)."""
    page.finished(result)
    leave = asyncio.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, leave.set)
    print(f"the page stays at {page.url}; Ctrl-C to stop", file=terminal, flush=True)
    loop.run_until_complete(leave.wait())


def _report_stop(stopped: PipelineInterrupted, prog: str, rest: str) -> None:
    of = "" if stopped.total is None else f" of {stopped.total:,}"
    print(
        f"{prog}: interrupted after {stopped.read:,}{of} records: "
        f"{stopped.landed:,} landed in {stopped.out / 'events'} ({stopped.writes} committed "
        f"batch{'es' * (stopped.writes != 1)}); rejected/, carrier_hourly/ and delays.png are "
        f"as before; {rest}"
    )


_SPARK_ERROR = re.compile(r"^\d\d:\d\d:\d\d ERROR \S+: (.+)$", re.M)


def _reason(exc: BaseException, log_path: Path | None) -> str:
    """The error's first line; for an error out of the JVM, whose first line only names the
    Java call, the first ERROR Spark logged during the run (e.g. "All masters are
    unresponsive! Giving up."), when there is one."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    text = lines[0] if lines else type(exc).__name__
    if log_path is not None and text.startswith("An error occurred while calling"):
        logged = _SPARK_ERROR.search(log_path.read_text(encoding="utf-8", errors="replace"))
        if logged:
            text = logged[1].strip()
    return text if len(text) <= 240 else text[:239] + "…"


def _what_to_check(exc: BaseException, out: Path, master: str, source: str | None) -> str:
    from reactive_aio.connectors.nats import ConnectionLostError
    from reactive_aio.spark import SparkWriteError

    if source is not None and (
        isinstance(exc, ConnectionLostError | TimeoutError)
        or type(exc).__module__.startswith("nats.")
    ):
        return f"check that the NATS server of {source} runs and answers; --resume continues"
    if isinstance(exc, SparkWriteError | OSError):
        return f"check free space and write permission under {out}"
    if type(exc).__name__ == "PySparkRuntimeError" and "JAVA_GATEWAY" in str(exc):
        return "check that Java 17 or later runs (java -version) and JAVA_HOME"
    if isinstance(exc, MemoryError):
        return "try --limit or a smaller --batch-rows"
    if master.startswith(_REMOTE):
        return f"check that {master} is a running Spark master with free workers"
    return "the log has Spark's messages"


def _new_log_path(logs: Path, command: str) -> Path:
    """``logs/<UTC time>-<command>-<host>-<pid>.log``, apart from the logs of workers on other
    machines; only the newest `_KEEP_LOGS` logs are kept."""
    logs.mkdir(exist_ok=True)
    for old in sorted(logs.glob("*.log"))[: -(_KEEP_LOGS - 1) or None]:
        old.unlink(missing_ok=True)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S.%fZ")
    return logs / f"{stamp}-{command}-{socket.gethostname()}-{os.getpid()}.log"


@contextlib.contextmanager
def _console_into(log: TextIO, *, enabled: bool) -> Iterator[TextIO]:
    """Point file descriptors 1 and 2 at *log*, for the JVM Spark starts (it inherits them, and
    would hold a pipe such as ``| tee`` open until it has shut down) and anything else that
    writes there; Python's ``sys.stdout`` and ``sys.stderr`` stay on the console. Yields the
    console's stderr."""
    if not enabled:
        yield sys.stderr
        return
    streams = [sys.stdout, sys.stderr]
    saved: list[int] = []
    for fd, stream in enumerate(streams, start=1):
        stream.flush()
        saved.append(os.dup(fd))
        os.dup2(log.fileno(), fd)
    sys.stdout, sys.stderr = (
        open(  # noqa: SIM115 - closed below, after the descriptors are restored
            copy, "w", encoding="utf-8", errors="backslashreplace", buffering=1, closefd=False
        )
        for copy in saved
    )
    try:
        yield sys.stderr
    finally:
        for fd, (console, copy) in enumerate(
            zip((sys.stdout, sys.stderr), saved, strict=True), start=1
        ):
            console.flush()
            os.dup2(copy, fd)
            console.close()
            os.close(copy)
        sys.stdout, sys.stderr = streams


def _leave(code: int, log: TextIO) -> NoReturn:
    """Exit now, without waiting for threads blocked in Spark (the JVM ends with us)."""
    for stream in (sys.stdout, sys.stderr, log):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)
