"""``replay``: a `ConnectableFlux` whose late subscribers first get the last *history* items.

Backpressure: unbounded-in (upstream is asked for everything once connected); every
subscriber reads the shared history at its own pace.
Errors: upstream errors and completion reach each subscriber after its replay; a subscriber
after termination gets the retained items, then the terminal signal.
Loop: with *ttl*, item age is measured on the loop's clock.
Context: each subscriber receives its signals (and the operators after it run their
callbacks) in the `contextvars` context in which it subscribed, as `ReplayProcessor` says.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from .._core import Publisher
from .._processors._replay import ReplayProcessor
from ._publish import ConnectableFlux

__all__ = ("replay",)

T = TypeVar("T")
W = TypeVar("W")


def replay(
    source: Publisher[T],
    history: int | None,
    ttl: float | None,
    wrap: Callable[[Publisher[T]], W],
) -> ConnectableFlux[T, W]:
    """A connectable over a fresh `ReplayProcessor` per connection."""
    return ConnectableFlux(
        source,
        lambda: ReplayProcessor[T](size=history, ttl=ttl, auto_cancel=False),
        wrap,
        renew=False,
    )
