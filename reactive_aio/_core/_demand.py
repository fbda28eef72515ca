"""Demand arithmetic: Python ints never overflow, so saturation is a ``min``."""

from __future__ import annotations

__all__ = ("MAX_DEMAND", "add_demand", "produced")

MAX_DEMAND = 2**63 - 1
"""Demand at or above this is unbounded (rule 3.17)."""


def add_demand(current: int, n: int) -> int:
    """Return ``current + n`` saturated at `MAX_DEMAND`."""
    total = current + n
    return MAX_DEMAND if total >= MAX_DEMAND else total


def produced(current: int, n: int) -> int:
    """Return the demand left after *n* emissions; unbounded demand stays unbounded."""
    return current if current == MAX_DEMAND else current - n
