"""Demand arithmetic: Python ints never overflow, so saturation is a ``min``.

`Replenisher` is the request side of every prefetching subscriber: it asks for a window up
front and re-requests in batches as the items are consumed. `DemandWindow` is the request side
of a consumer whose window moves (a batch of rows to fill, a buffer of bytes): it asks for what
is missing up to the current target, in batches. Every re-request in the library goes through
one of the two, with the one replenish policy of `replenish_threshold`.
"""

from __future__ import annotations

import attrs

from ._spec import Subscription

__all__ = (
    "MAX_DEMAND",
    "DemandWindow",
    "Replenisher",
    "add_demand",
    "produced",
    "replenish_threshold",
)

MAX_DEMAND = 2**63 - 1
"""Demand at or above this is unbounded (rule 3.17)."""


def add_demand(current: int, n: int) -> int:
    """Return ``current + n`` saturated at `MAX_DEMAND`."""
    total = current + n
    return MAX_DEMAND if total >= MAX_DEMAND else total


def produced(current: int, n: int) -> int:
    """Return the demand left after *n* emissions; unbounded demand stays unbounded."""
    return current if current == MAX_DEMAND else current - n


def replenish_threshold(prefetch: int) -> int:
    """Items consumed before re-requesting: three quarters of *prefetch* (0 when unbounded)."""
    if prefetch >= MAX_DEMAND:
        return 0
    return prefetch - (prefetch >> 2)


@attrs.define(eq=False)
class Replenisher:
    """Asks an upstream for *prefetch* items, then for *batch* more each time that many were
    consumed, so no more than *prefetch* are ever outstanding.

    *batch* defaults to three quarters of *prefetch*; ``prefetch == MAX_DEMAND`` asks once for
    everything and never again.
    """

    prefetch: int
    batch: int = attrs.field()
    upstream: Subscription | None = attrs.field(default=None, init=False)
    """The subscription asked, until `cancel` (or the owner) lets go of it."""
    _consumed: int = attrs.field(default=0, init=False)

    @batch.default
    def _three_quarters(self) -> int:
        return replenish_threshold(self.prefetch)

    def __attrs_post_init__(self) -> None:
        if self.prefetch <= 0:
            raise ValueError(f"prefetch must be > 0, got {self.prefetch}")
        if self.prefetch >= MAX_DEMAND:
            self.batch = 0

    def start(self, subscription: Subscription) -> None:
        """Keep *subscription* and ask it for the first window."""
        self.upstream = subscription
        subscription.request(self.prefetch)

    def consumed(self, count: int) -> None:
        """*count* more items were consumed: re-request once a batch is complete."""
        batch = self.batch
        if not batch:
            return
        total = self._consumed + count
        if total < batch:
            self._consumed = total
            return
        self._consumed = 0
        upstream = self.upstream
        if upstream is not None:
            upstream.request(total)

    def cancel(self) -> None:
        """Cancel the upstream (once) and let go of it."""
        upstream, self.upstream = self.upstream, None
        if upstream is not None:
            upstream.cancel()


@attrs.define(eq=False)
class DemandWindow:
    """What a consumer asked of *upstream* and has not received yet, topped up to a target.

    The owner counts what arrives with `received` and calls `top_up` with the number of items
    it wants asked for at that moment; the window asks for the difference once it is at least
    *batch*, so requests go out in batches however the target moves.
    """

    upstream: Subscription | None = None
    asked: int = 0
    """Requested and not received yet."""

    def top_up(self, wanted: int, batch: int = 1) -> int:
        """Ask for what is missing for `asked` to reach *wanted*, when that is at least
        *batch* (and at least one); return how many were asked for."""
        missing = wanted - self.asked
        upstream = self.upstream
        if missing < batch or missing <= 0 or upstream is None:
            return 0
        self.asked = wanted  # first: a synchronous upstream delivers inside the request
        upstream.request(missing)
        return missing

    def received(self, count: int = 1) -> None:
        """*count* of the items asked for arrived."""
        self.asked -= count
