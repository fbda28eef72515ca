"""SubmissionPublisher: bounded per-subscriber buffers, submit waits, offer drops."""

from __future__ import annotations

import asyncio
import threading

import anyio
import pytest

from reactive_aio import ProtocolViolationError, SubmissionPublisher, Subscriber
from reactive_aio.testing import TestSubscriber


async def test_submit_delivers_to_every_subscriber_within_demand() -> None:
    publisher = SubmissionPublisher[int](4)
    a = TestSubscriber[int]()
    b = TestSubscriber[int](initial_request=10)
    publisher.subscribe(a)
    publisher.subscribe(b)
    assert publisher.subscriber_count == 2
    assert await publisher.submit(1) == 1
    await publisher.submit(2)
    a.assert_no_values()
    b.assert_values(1, 2)
    assert publisher.estimate_maximum_lag() == 2
    a.request(1)
    a.assert_values(1)
    publisher.close()
    a.assert_not_terminated()
    a.request(1)
    a.assert_values(1, 2).assert_complete()
    b.assert_complete()


async def test_submit_waits_for_room_in_the_slowest_buffer() -> None:
    publisher = SubmissionPublisher[int](2)
    slow = TestSubscriber[int]()
    publisher.subscribe(slow)
    await publisher.submit(0)
    await publisher.submit(1)
    blocked = asyncio.ensure_future(publisher.submit(2))
    await asyncio.sleep(0)
    assert not blocked.done()
    slow.request(1)
    await blocked
    assert publisher.estimate_maximum_lag() == 2
    slow.request(10)
    slow.assert_values(0, 1, 2)


async def test_offer_drops_for_full_buffers_and_reports() -> None:
    publisher = SubmissionPublisher[int](1)
    slow = TestSubscriber[int]()
    fast = TestSubscriber[int](initial_request=10)
    publisher.subscribe(slow)
    publisher.subscribe(fast)
    assert publisher.offer_nowait(0) == 1
    dropped: list[int] = []

    def on_drop(subscriber: Subscriber[int], item: int) -> bool:
        dropped.append(item)
        return False

    assert publisher.offer_nowait(1, on_drop=on_drop) == -1
    assert dropped == [1]
    fast.assert_values(0, 1)
    slow.request(5)
    slow.assert_values(0)
    assert await publisher.offer(2, timeout=0.01) == 0


async def test_offer_with_timeout_waits_for_room() -> None:
    publisher = SubmissionPublisher[int](1)
    slow = TestSubscriber[int]()
    publisher.subscribe(slow)
    publisher.offer_nowait(0)
    pending = asyncio.ensure_future(publisher.offer(1, timeout=5.0))
    await asyncio.sleep(0)
    slow.request(1)
    assert await pending >= 0
    slow.request(1)
    slow.assert_values(0, 1)


async def test_close_exceptionally_fails_at_once_and_late_subscribers() -> None:
    publisher = SubmissionPublisher[int](4)
    ts = TestSubscriber[int]()
    publisher.subscribe(ts)
    await publisher.submit(1)
    publisher.close_exceptionally(OSError("down"))
    ts.assert_no_values().assert_error(OSError)
    late = TestSubscriber[int]()
    publisher.subscribe(late)
    late.assert_error(OSError)
    with pytest.raises(anyio.ClosedResourceError):
        await publisher.submit(2)
    assert isinstance(publisher.closed_exception, OSError)


async def test_cancel_removes_the_subscriber_and_frees_producers() -> None:
    publisher = SubmissionPublisher[int](1)
    ts = TestSubscriber[int]()
    publisher.subscribe(ts)
    await publisher.submit(0)
    blocked = asyncio.ensure_future(publisher.submit(1))
    await asyncio.sleep(0)
    ts.cancel()
    await blocked
    assert publisher.subscriber_count == 0


async def test_request_zero_and_double_subscribe() -> None:
    publisher = SubmissionPublisher[int]()
    ts = TestSubscriber[int]()
    publisher.subscribe(ts)
    publisher.subscribe(ts)  # rules 1.10, 2.12: refused, and the first subscription ends too
    assert ts.subscriptions == 2
    ts.assert_error(ProtocolViolationError, match="rules 1.10 and 2.12")
    assert publisher.subscriber_count == 0
    bad = TestSubscriber[int]()
    publisher.subscribe(bad)
    bad.request(0)
    bad.assert_error(ValueError, match="rule 3.9")


async def test_consume_completes_and_fails_with_the_callback() -> None:
    publisher = SubmissionPublisher[int]()
    seen: list[int] = []
    done = publisher.consume(seen.append)
    for i in range(5):
        await publisher.submit(i)
    publisher.close()
    await done
    assert seen == [0, 1, 2, 3, 4]

    failing = SubmissionPublisher[int]()

    def boom(item: int) -> None:
        raise ValueError("consumer failed")

    failed = failing.consume(boom)
    await failing.submit(1)
    with pytest.raises(ValueError, match="consumer failed"):
        await failed
    assert failing.subscriber_count == 0


async def test_submission_from_another_thread() -> None:
    publisher = SubmissionPublisher[int](8)
    ts = TestSubscriber[int](initial_request=1000)
    publisher.subscribe(ts)
    results: list[int] = []

    def produce() -> None:
        results.extend(publisher.offer_nowait(i) for i in range(100))
        publisher.close()

    thread = threading.Thread(target=produce)
    thread.start()
    await ts.wait_terminated()
    await asyncio.to_thread(thread.join)
    ts.assert_values(*range(100)).assert_complete()
    assert all(r >= 0 for r in results)


async def test_submit_from_another_loop() -> None:
    publisher = SubmissionPublisher[int](2)
    ts = TestSubscriber[int](initial_request=1000)
    publisher.subscribe(ts)

    async def produce() -> None:
        for i in range(50):
            await publisher.submit(i)

    thread = threading.Thread(target=asyncio.run, args=(produce(),))
    thread.start()
    await ts.wait_for_values(50)
    await asyncio.to_thread(thread.join)  # the loop must keep running for the last hand-back
    ts.assert_values(*range(50))


def test_rejects_bad_capacity() -> None:
    with pytest.raises(ValueError, match="max_buffer_capacity"):
        SubmissionPublisher[int](0)


async def test_the_consumer_cancels_a_second_subscription_and_refuses_none() -> None:
    publisher = SubmissionPublisher[int]()
    seen: list[int] = []
    done = publisher.consume(seen.append)
    consumer = publisher._subscriptions[0].subscriber
    assert consumer is not None
    second = _Cancellable()
    consumer.on_subscribe(second)
    assert second.cancelled, "a second subscription must be cancelled (rule 2.5)"
    with pytest.raises(TypeError, match=r"rule 2\.13"):
        consumer.on_subscribe(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"rule 2\.13"):
        consumer.on_next(None)  # type: ignore[arg-type]
    assert seen == []
    with pytest.raises(TypeError, match=r"rule 2\.13"):
        await done  # the broken signal ended the consumption: the future does not hang


class _Cancellable:
    def __init__(self) -> None:
        self.cancelled = False

    def request(self, n: int) -> None:
        pass

    def cancel(self) -> None:
        self.cancelled = True
