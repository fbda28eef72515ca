"""`AskAheadSubscriber`: the base of 1:1 operators that drop or hold back the first items.

``skip`` drops its first *n* items and ``skip_last`` holds *n* back until the end: either way
the first downstream request is short by *n*. Raising it by *n* once (saturated) costs no
extra round trip upstream; after that demand passes through.
"""

from __future__ import annotations

from typing import TypeVar

import attrs

from ._demand import add_demand
from ._operator import OperatorSubscriber

__all__ = ("AskAheadSubscriber",)

T = TypeVar("T")


@attrs.define(eq=False)
class AskAheadSubscriber(OperatorSubscriber[T, T]):
    """Adds *ahead* to the first positive request: the items it will drop or hold back."""

    _ahead: int = attrs.field(kw_only=True, alias="ahead")

    def _request(self, n: int) -> None:
        ahead = self._ahead
        if ahead and type(n) is int and n > 0:
            self._ahead = 0
            n = add_demand(n, ahead)
        super()._request(n)
