"""A plain-Python reference model of operator chains, to compare the library against.

Each entry says how to apply an operator to a `Flux` and what the same operator does to a
plain list of items followed by a terminal outcome ("complete" or an exception).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
from hypothesis import strategies as st

from reactive_aio import Flux

Outcome = tuple[list[int], str | BaseException]
"""Items, then "complete" or the error that ended the stream."""


@attrs.frozen
class OperatorModel:
    """One operator: a parameter strategy, its library form and its model form."""

    params: st.SearchStrategy[Any]
    apply: Callable[[Flux[int], Any], Flux[int]]
    model: Callable[[Outcome, Any], Outcome]


def _map_model(outcome: Outcome, k: int) -> Outcome:
    items, end = outcome
    return [x * k + 1 for x in items], end


def _filter_model(outcome: Outcome, m: int) -> Outcome:
    items, end = outcome
    return [x for x in items if x % m != 0], end


def _take_model(outcome: Outcome, n: int) -> Outcome:
    items, end = outcome
    if len(items) >= n:
        return items[:n], "complete"
    return items, end


OPERATORS: dict[str, OperatorModel] = {
    "map": OperatorModel(st.integers(-3, 3), lambda f, k: f.map(lambda x: x * k + 1), _map_model),
    "filter": OperatorModel(
        st.integers(2, 4), lambda f, m: f.filter(lambda x: x % m != 0), _filter_model
    ),
    "take": OperatorModel(st.integers(0, 30), lambda f, n: f.take(n), _take_model),
}
"""Every operator the randomized schedules combine; extend it as operators land."""
