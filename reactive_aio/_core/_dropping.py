"""`DroppingSubscriber`: the base of 1:1 operators that may drop items.

Every dropped item is replaced by a ``request(1)`` upstream, so downstream still receives what
it asked for; once downstream demand is unbounded no replacement is needed.
"""

from __future__ import annotations

from typing import Generic, TypeVar

import attrs

from ._demand import MAX_DEMAND
from ._operator import OperatorSubscriber

__all__ = ("DroppingSubscriber",)

T = TypeVar("T")
R = TypeVar("R")


@attrs.define(eq=False)
class DroppingSubscriber(OperatorSubscriber[T, R], Generic[T, R]):
    """An `OperatorSubscriber` with `_drop`, to call instead of emitting an item."""

    _unbounded: bool = attrs.field(default=False, init=False)

    def _request(self, n: int) -> None:
        """Forward demand; remember when it became unbounded."""
        if type(n) is int and n >= MAX_DEMAND:
            self._unbounded = True
        super()._request(n)

    def _drop(self) -> None:
        """An item was not emitted: ask upstream for a replacement."""
        if not self._unbounded and not self._done:
            upstream = self._upstream
            if upstream is not None:
                upstream.request(1)
