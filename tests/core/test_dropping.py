"""DroppingSubscriber: a one-to-one operator that may drop items asks for a replacement."""

from __future__ import annotations

import attrs

from reactive_aio import MAX_DEMAND
from reactive_aio.lowlevel import DroppingSubscriber
from reactive_aio.testing import TestSubscriber

from ._support import through


@attrs.define(eq=False)
class _Odd(DroppingSubscriber[int, int]):
    def on_next(self, item: int) -> None:
        if item % 2:
            self._next(item)
        else:
            self._drop()


async def test_a_dropping_subscriber_asks_for_one_item_per_drop_until_demand_is_unbounded() -> None:
    ts = TestSubscriber[int]()
    source = through(_Odd(ts))
    ts.request(2)
    source.next(2, 1, 4, 3)
    ts.assert_values(1, 3)
    assert source.requests == [2, 1, 1]
    ts.request(MAX_DEMAND)
    source.next(6, 5)
    ts.assert_values(1, 3, 5)
    assert source.requests == [2, 1, 1, MAX_DEMAND]  # unbounded: no replacements
