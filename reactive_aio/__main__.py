"""``reactive-aio`` / ``python -m reactive_aio``: the project's command line."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence

from ._flux import Flux

__all__ = ("main",)


async def _demo(count: int) -> None:
    """A small backpressured stream: squares of the odd numbers, consumed by ``async for``."""
    total = 0
    async for square in (
        Flux.range(0, count).filter(lambda x: x % 2 == 1).map(lambda x: x * x).iterate(prefetch=64)
    ):
        total += square
    print(f"sum of the squares of the odd numbers below {count}: {total}")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``reactive-aio`` console script."""
    parser = argparse.ArgumentParser(prog="reactive-aio", description=__doc__)
    commands = parser.add_subparsers(dest="command")
    demo = commands.add_parser("demo", help="run a small backpressured stream")
    demo.add_argument("--count", type=int, default=1_000_000)
    args = parser.parse_args(argv)
    if args.command in (None, "demo"):
        asyncio.run(_demo(getattr(args, "count", 1_000_000)))
        return 0
    parser.error(f"unknown command {args.command!r}")


if __name__ == "__main__":
    sys.exit(main())
