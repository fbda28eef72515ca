"""`TailSubscriber`: the base of operators that hold items until upstream completes.

``take_last`` keeps the last items, ``buffer`` its unfilled lists: what is held is only known
at completion, and downstream may have asked for less of it. Demand that arrives before then is
recorded; at completion the held items go into a `BufferDrain` that serves that demand and
any later one, and completes after the last item.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Generic, TypeVar

import attrs

from ._buffer_drain import BufferDrain
from ._demand import add_demand
from ._operator import OperatorSubscriber

__all__ = ("TailSubscriber",)

T = TypeVar("T")
R = TypeVar("R")


@attrs.define(eq=False)
class TailSubscriber(OperatorSubscriber[T, R], Generic[T, R]):
    """Subclasses call `_complete_with` from ``on_complete`` and may override `_ask_upstream`
    and `_drop_held`."""

    _requested: int = attrs.field(default=0, init=False)
    """Downstream demand not served yet, handed to the tail at completion."""
    _tail: BufferDrain[R] | None = attrs.field(default=None, init=False)

    def _ask_upstream(self, n: int) -> None:
        """Downstream asked for *n* more before completion (take_last asked for all up front)."""

    def _drop_held(self) -> None:
        """Forget what is held: the stream failed or was cancelled."""

    def _complete_with(self, held: Iterable[R]) -> None:
        if self._done:
            return
        downstream = self._finish()
        self._upstream = None
        tail = self._tail = BufferDrain[R](downstream)
        for item in held:
            tail.push(item)
        tail.finish()
        if self._requested:
            tail.request(self._requested)

    def on_error(self, error: BaseException) -> None:
        self._drop_held()
        super().on_error(error)

    def _request(self, n: int) -> None:
        tail = self._tail
        if tail is not None:
            tail.request(n)
        elif type(n) is not int or n <= 0 or self._done:
            super()._request(n)  # rule 3.9's error, or nothing once done
        else:
            self._requested = add_demand(self._requested, n)
            self._ask_upstream(n)

    def cancel(self) -> None:
        tail = self._tail
        if tail is not None:
            tail.cancel()
        else:
            super().cancel()
            self._drop_held()
