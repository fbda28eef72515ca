"""GatedSubscriber: an operator opened or closed by another publisher's first item."""

from __future__ import annotations

from typing import TypeVar

import attrs

from reactive_aio import Flux
from reactive_aio.lowlevel import GatedSubscriber
from reactive_aio.testing import TestPublisher, TestSubscriber

from ._support import through

T = TypeVar("T")


@attrs.define(eq=False)
class _Until(GatedSubscriber[T]):
    """take_until's shape: the other publisher's first item completes the stream."""

    def on_next(self, item: T) -> None:
        self._next(item)

    def other_emitted(self) -> None:
        self._complete_early()


async def test_a_gated_subscriber_watches_the_other_publisher_before_downstream_asks() -> None:
    other = TestPublisher[str].create()
    ts = TestSubscriber[int]()
    source = through(_Until(ts, other=other))
    assert other.requests == [1]  # asked before downstream got on_subscribe
    ts.request(5)
    source.next(1, 2)
    other.next("stop")
    ts.assert_values(1, 2).assert_complete()
    source.assert_cancelled()
    other.assert_cancelled()


async def test_a_gated_subscriber_fails_with_the_other_publisher_and_stops_watching() -> None:
    other = TestPublisher[str].create()
    failed = TestSubscriber[int](initial_request=5)
    failing = through(_Until(failed, other=other))
    other.error(RuntimeError("other failed"))
    failed.assert_error(RuntimeError, "other failed")
    failing.assert_cancelled()

    watched = TestPublisher[str].create()
    ts = TestSubscriber[int](initial_request=5)
    source = through(_Until(ts, other=watched))
    source.complete()  # the stream ended on its own: the other publisher is cancelled
    ts.assert_complete()
    watched.assert_cancelled()


async def test_a_gated_subscriber_whose_other_emits_at_once_completes_without_items() -> None:
    ts = TestSubscriber[int](initial_request=5)
    source = through(_Until(ts, other=Flux.just("now")))
    ts.assert_no_values().assert_complete()
    source.assert_cancelled()
