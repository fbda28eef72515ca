"""UnicastBuffer: a publisher for one subscriber that a producer feeds (sub-streams)."""

from __future__ import annotations

from reactive_aio import ProtocolViolationError
from reactive_aio.lowlevel import UnicastBuffer
from reactive_aio.testing import TestSubscriber


async def test_items_pushed_before_the_subscriber_wait_for_its_demand() -> None:
    consumed: list[int] = []
    buffer = UnicastBuffer[str](on_consumed=consumed.append)
    buffer.push("a")
    buffer.push("b")
    buffer.end()
    ts = TestSubscriber[str]()
    buffer.subscribe(ts)
    ts.assert_no_values()
    ts.request(1)
    ts.assert_values("a").assert_not_terminated()
    ts.request(1)
    ts.assert_values("a", "b").assert_complete()
    assert sum(consumed) == 2


async def test_a_second_subscriber_is_refused() -> None:
    buffer = UnicastBuffer[int]()
    buffer.subscribe(TestSubscriber[int]())
    second = TestSubscriber[int]()
    buffer.subscribe(second)
    second.assert_error(ProtocolViolationError, match="single subscriber")


async def test_a_cancel_tells_the_producer_done_first_then_counts_what_was_not_delivered() -> None:
    events: list[object] = []
    buffer = UnicastBuffer[int](on_consumed=events.append, on_done=lambda: events.append("done"))
    ts = TestSubscriber[int](initial_request=1)
    buffer.subscribe(ts)
    buffer.push(1)
    buffer.push(2)
    ts.cancel()
    buffer.push(3)  # dropped, and still counted
    ts.assert_values(1)
    assert events == [1, "done", 1, 1]
    assert buffer.done


async def test_an_error_follows_the_buffered_items_and_discard_counts_them() -> None:
    failing = UnicastBuffer[int]()
    failing.push(1)
    failing.end(OSError("producer"))
    ts = TestSubscriber[int](initial_request=5)
    failing.subscribe(ts)
    ts.assert_values(1).assert_error(OSError, match="producer")

    consumed: list[int] = []
    nobody = UnicastBuffer[int](on_consumed=consumed.append)
    nobody.push(1)
    nobody.push(2)
    nobody.discard()
    assert consumed == [2]
    assert nobody.done
