"""`SizedTimedOperator`: the base of operators that cut their upstream into groups bounded in
size and in time (``buffer_timeout``'s lists, ``window_timeout``'s windows).

A `BufferDrain` configured for groups: it starts serving downstream as soon as the upstream
subscribes, and every group downstream asks for may take *max_size* items upstream. A group
that its `Deadline` cuts short uses one unit of demand for fewer items; the items that arrive
on the rest fill the next groups, which the buffer holds until they are requested.
"""

from __future__ import annotations

from typing import Generic, TypeVar

import attrs

from ._buffer_drain import BufferDrain
from ._deadline import Deadline
from ._demand import add_demand
from ._spec import Subscription

__all__ = ("SizedTimedOperator",)

T = TypeVar("T")
R = TypeVar("R")


@attrs.define(eq=False)
class SizedTimedOperator(BufferDrain[R], Generic[T, R]):
    """Groups of at most *max_size* items (of type ``T``), each open for at most *max_time*
    seconds (its `Deadline`): every group downstream asks for may take *max_size* items
    upstream. Subclasses implement ``on_next(item: T)``."""

    _max_size: int = attrs.field(kw_only=True, alias="max_size")
    _max_time: float = attrs.field(kw_only=True, alias="max_time")
    deadline: Deadline | None = attrs.field(default=None, init=False)

    def _subscribed(self, upstream: Subscription) -> None:
        self.start()  # downstream's demand is forwarded as it comes

    def _requested_more(self, n: int) -> None:
        upstream = self._upstream
        if upstream is not None and not self._upstream_done:
            upstream.request(add_demand(0, n * self._max_size))
