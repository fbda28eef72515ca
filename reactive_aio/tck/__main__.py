"""``python -m reactive_aio.tck MODULE:FACTORY``: verify any publisher, processor or subscriber.

* ``--kind publisher`` (default): ``FACTORY(n)`` returns a publisher of exactly n integers;
  ``--failed MODULE:FACTORY`` optionally names a factory of a failing publisher.
* ``--kind processor``: ``FACTORY(buffer_size)`` returns an identity processor of integers;
  ``--max-subscribers N`` and ``--coordinated`` describe it.
* ``--kind subscriber``: ``FACTORY()`` returns a subscriber of integers (blackbox).

``python -m reactive_aio.tck --coverage`` counts the official test names present (of 94) and the
extra checks.

Prints one line per test with its rule and category, then ``N passed, N failed, N skipped``;
the exit status is 1 when a test failed.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import sys
from collections.abc import Callable, Sequence
from typing import Any

from .._core import MAX_DEMAND, Processor, Publisher, Subscriber
from ._base import Verification
from ._env import set_timeout_scale
from ._processor import IdentityProcessorVerification
from ._publisher import PublisherVerification
from ._rules import coverage, extra_checks
from ._runner import Outcome, run_verification
from ._subscriber_blackbox import SubscriberBlackboxVerification

__all__ = ("main",)


def _load(spec: str) -> Callable[..., Any]:
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise SystemExit(f"expected MODULE:FACTORY, got {spec!r}")
    target: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        target = getattr(target, part)
    if not callable(target):
        raise SystemExit(f"{spec} is not callable")
    return target  # type: ignore[no-any-return]


def build_verification(
    kind: str,
    factory: Callable[..., Any],
    failed: Callable[[], Any] | None = None,
    *,
    max_subscribers: int = MAX_DEMAND,
    coordinated: bool = False,
) -> type[Verification]:
    """A verification class whose factories call the user's *factory*."""
    if kind == "publisher":

        class _Publisher(PublisherVerification[Any]):
            def create_publisher(self, elements: int) -> Publisher[Any]:
                return factory(elements)  # type: ignore[no-any-return]

            def create_failed_publisher(self) -> Publisher[Any] | None:
                return None if failed is None else failed()

        return _Publisher
    if kind == "processor":

        class _Processor(IdentityProcessorVerification[Any]):
            def create_identity_processor(self, buffer_size: int) -> Processor[Any, Any]:
                return factory(buffer_size)  # type: ignore[no-any-return]

            def create_element(self, element: int) -> Any:
                return element

            def create_failed_publisher(self) -> Publisher[Any] | None:
                return None if failed is None else failed()

            def max_supported_subscribers(self) -> int:
                return max_subscribers

            def does_coordinated_emission(self) -> bool:
                return coordinated

        return _Processor
    if kind == "subscriber":

        class _Subscriber(SubscriberBlackboxVerification[Any]):
            def create_subscriber(self) -> Subscriber[Any]:
                return factory()  # type: ignore[no-any-return]

            def create_element(self, element: int) -> Any:
                return element

        return _Subscriber
    raise SystemExit(f"unknown kind {kind!r}")


def format_report(outcomes: Sequence[Outcome]) -> str:
    """One line per test, then the totals line."""
    lines = []
    for o in outcomes:
        rule = o.rule or "-"
        line = f"{o.status.upper():7} {rule:>5} {o.category:10} {o.name}"
        if o.message and o.status != "passed":
            line += f"\n{'':24}{o.message.splitlines()[0][:200]}"
        lines.append(line)
    counts = {s: sum(o.status == s for o in outcomes) for s in ("passed", "failed", "skipped")}
    lines.append(
        f"{counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped"
    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m reactive_aio.tck``."""
    parser = argparse.ArgumentParser(
        prog="python -m reactive_aio.tck",
        description="Run the Reactive Streams TCK against a factory.",
    )
    parser.add_argument("factory", metavar="MODULE:FACTORY", nargs="?")
    parser.add_argument(
        "--kind", choices=("publisher", "processor", "subscriber"), default="publisher"
    )
    parser.add_argument("--failed", metavar="MODULE:FACTORY", help="a failing publisher's factory")
    parser.add_argument(
        "--max-subscribers",
        type=int,
        default=MAX_DEMAND,
        metavar="N",
        help="processors: subscribers supported at once (below 2 skips the multi-subscriber tests)",
    )
    parser.add_argument(
        "--coordinated", action="store_true", help="processors: emits in lockstep (multicast)"
    )
    parser.add_argument("--timeout-scale", type=float, default=None, metavar="FACTOR")
    parser.add_argument("-k", dest="keyword", default=None, help="only tests whose name has this")
    parser.add_argument(
        "--coverage", action="store_true", help="count the official test names and extra checks"
    )
    args = parser.parse_args(argv)
    if args.coverage:
        present, total, missing = coverage()
        print(
            f"{present}/{total} official TCK test names present; {len(extra_checks())} extra checks"
        )
        for name in missing:
            print(f"missing: {name}")
        return 0 if not missing else 1
    if args.factory is None:
        parser.error("MODULE:FACTORY is required")
    if args.timeout_scale is not None:
        set_timeout_scale(args.timeout_scale)
    sys.path.insert(0, "")
    verification = build_verification(
        args.kind,
        _load(args.factory),
        _load(args.failed) if args.failed else None,
        max_subscribers=args.max_subscribers,
        coordinated=args.coordinated,
    )
    from ._runner import test_names

    names = [n for n in test_names(verification) if args.keyword is None or args.keyword in n]
    outcomes = asyncio.run(run_verification(verification, names))
    print(format_report(outcomes))
    return 1 if any(o.status == "failed" for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
