"""`checked`: run a publisher under the runtime protocol checker."""

from __future__ import annotations

from typing import TypeVar

from .._core import (
    DEBUG_CHECKER,
    LoopBound,
    ProtocolChecker,
    Publisher,
    Violation,
    adopt,
    assembly_site,
)
from .._flux import Flux

__all__ = ("checked", "debug_violations")

T = TypeVar("T")


def checked(
    publisher: Publisher[T], *, checker: ProtocolChecker | None = None, name: str | None = None
) -> Flux[T]:
    """Wrap *publisher* so every signal to each subscriber is checked against the spec.

    Violations (more ``on_next`` than requested, a signal after a terminal one, overlapping
    signals, a second ``on_subscribe``, ``None`` items, ``on_error``/``on_complete`` calling
    back into the subscription) are recorded on *checker* (the debug checker by default) with
    their rule id and the file and line where *publisher* was assembled.
    """
    target = checker if checker is not None else DEBUG_CHECKER
    checked_publisher = target.wrap(publisher, name=name, site=assembly_site())
    if isinstance(publisher, LoopBound):
        return Flux(checked_publisher)
    # A foreign publisher: check what it sends, then hand it over to the loop like any other.
    return Flux(adopt(checked_publisher))


def debug_violations() -> list[Violation]:
    """Violations collected so far by `checked` without a checker and by ``REACTIVE_AIO_DEBUG=1``."""
    return DEBUG_CHECKER.violations
