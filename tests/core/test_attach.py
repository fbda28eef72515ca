"""attach: a subscriber subscribed a second time is refused by every publisher of the library."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from reactive_aio import (
    Flux,
    MulticastProcessor,
    ProtocolViolationError,
    Publisher,
    ReplayProcessor,
)
from reactive_aio.testing import TestSubscriber


def _processor_fed_with(
    processor: MulticastProcessor[int] | ReplayProcessor[int],
) -> Publisher[int]:
    Flux.range(0, 3).subscribe(processor)
    return processor


PUBLISHERS: dict[str, Callable[[], Publisher[int]]] = {
    "range": lambda: Flux.range(0, 3),
    "map": lambda: Flux.range(0, 3).map(lambda x: x),
    "take": lambda: Flux.range(0, 3).take(3),
    "start_with": lambda: Flux.range(1, 2).start_with(0),
    "timeout": lambda: Flux.range(0, 3).timeout(10),
    "multicast_processor": lambda: _processor_fed_with(MulticastProcessor[int]()),
    "replay_processor": lambda: _processor_fed_with(ReplayProcessor[int]()),
    "share": lambda: Flux.range(0, 3).share(),
}


@pytest.mark.parametrize("make", PUBLISHERS.values(), ids=PUBLISHERS.keys())
async def test_a_subscriber_subscribed_twice_gets_an_error_naming_the_rules(
    make: Callable[[], Publisher[int]],
) -> None:
    publisher = make()
    ts = TestSubscriber[int]()
    publisher.subscribe(ts)
    publisher.subscribe(ts)
    ts.assert_error(ProtocolViolationError, match="rules 1.10 and 2.12")
    ts.request(10)  # both subscriptions ended with the refusal: nothing follows the error
    for _ in range(10):
        await asyncio.sleep(0)
    ts.assert_no_values()
    assert ts.completions == 0


async def test_a_twice_subscribed_subscriber_does_not_hold_up_the_multicast_lockstep() -> None:
    processor = MulticastProcessor[int]()
    other = TestSubscriber[int](initial_request=10)
    processor.subscribe(other)
    twice = TestSubscriber[int]()  # no demand: it would hold every other subscriber up
    processor.subscribe(twice)
    processor.subscribe(twice)
    assert processor.subscriber_count == 1
    Flux.range(0, 3).subscribe(processor)
    other.assert_values(0, 1, 2).assert_complete()


async def test_a_subscriber_may_subscribe_again_once_its_subscription_ended() -> None:
    ts = TestSubscriber[int](initial_request=10)
    Flux.range(0, 2).subscribe(ts)
    Flux.range(2, 2).subscribe(ts)  # the first one completed: not refused
    assert ts.subscriptions == 2
    assert not ts.errors
    retried = (
        await Flux.range(0, 2)
        .concat_with(Flux.error(OSError("x")))
        .retry(2)
        .on_error_return(-1)
        .to_list()
    )
    assert retried == [0, 1, 0, 1, 0, 1, -1]
