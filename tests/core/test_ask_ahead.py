"""AskAheadSubscriber: the first request is raised by the items the operator will drop or hold
back."""

from __future__ import annotations

from collections import deque

import attrs

from reactive_aio import MAX_DEMAND
from reactive_aio.lowlevel import AskAheadSubscriber
from reactive_aio.testing import TestSubscriber

from ._support import through


@attrs.define(eq=False)
class _HoldBack(AskAheadSubscriber[int]):
    """Holds the last *ahead* items back (skip_last's shape)."""

    _held: deque[int] = attrs.field(factory=deque, init=False)

    def on_next(self, item: int) -> None:
        self._held.append(item)
        if len(self._held) > 2:
            self._next(self._held.popleft())


async def test_an_ask_ahead_subscriber_raises_the_first_request_only() -> None:
    ts = TestSubscriber[int]()
    source = through(_HoldBack(ts, ahead=2))
    ts.request(1)
    source.next(1, 2, 3)
    ts.request(1)
    source.next(4)
    source.complete()
    ts.assert_values(1, 2).assert_complete()
    assert source.requests == [3, 1]


async def test_an_ask_ahead_subscriber_saturates_and_leaves_bad_requests_to_the_rules() -> None:
    saturated, bad = TestSubscriber[int](), TestSubscriber[int]()
    unbounded = through(_HoldBack(saturated, ahead=2))
    failing = through(_HoldBack(bad, ahead=2))
    saturated.request(MAX_DEMAND)
    bad.request(0)
    assert unbounded.requests == [MAX_DEMAND]
    assert failing.requests == [0]  # passed on unchanged: the source fails it (rule 3.9)
