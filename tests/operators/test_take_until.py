"""take_until and skip_until: gated by another publisher."""

from __future__ import annotations

import asyncio

from reactive_aio import Flux, Publisher, Subscriber, Subscription
from reactive_aio.testing import TestSubscriber

from ._transform_support import Probe


class _Signal(Publisher[int]):
    """A publisher the test fires by hand: one item, or an error."""

    def __init__(self) -> None:
        self.subscriber: Subscriber[int] | None = None
        self.cancelled = False

    def subscribe(self, subscriber: Subscriber[int]) -> None:
        self.subscriber = subscriber
        signal = self

        class _Sub(Subscription):
            def request(self, n: int) -> None:
                pass

            def cancel(self) -> None:
                signal.cancelled = True

        subscriber.on_subscribe(_Sub())

    def fire(self) -> None:
        assert self.subscriber is not None
        self.subscriber.on_next(1)

    def fail(self, error: BaseException) -> None:
        assert self.subscriber is not None
        self.subscriber.on_error(error)


def test_take_until_stops_when_other_emits() -> None:
    probe = Probe(100)
    other = _Signal()
    ts = TestSubscriber[int]()
    Flux.from_publisher(probe).take_until(other).subscribe(ts)
    ts.request(2)
    ts.assert_values(0, 1).assert_not_terminated()
    other.fire()
    ts.assert_values(0, 1).assert_complete()
    assert probe.cancels == 1
    assert other.cancelled


def test_take_until_cancel_and_errors() -> None:
    probe = Probe(100)
    other = _Signal()
    ts = TestSubscriber[int](initial_request=1)
    Flux.from_publisher(probe).take_until(other).subscribe(ts)
    ts.cancel()
    assert probe.cancels == 1
    assert other.cancelled
    other2 = _Signal()
    probe2 = Probe(100)
    ts2 = TestSubscriber[int](initial_request=1)
    Flux.from_publisher(probe2).take_until(other2).subscribe(ts2)
    other2.fail(OSError("other"))
    ts2.assert_values(0).assert_error(OSError)
    assert probe2.cancels == 1
    other3 = _Signal()
    ts3 = TestSubscriber[int](initial_request=5)
    Flux.from_publisher(Probe(1, KeyError("main"))).take_until(other3).subscribe(ts3)
    ts3.assert_values(0).assert_error(KeyError)
    assert other3.cancelled


def test_take_until_other_firing_at_once_lets_nothing_through() -> None:
    probe = Probe(5)
    ts = TestSubscriber[int](initial_request=5)
    Flux.from_publisher(probe).take_until(Flux.just(1)).subscribe(ts)
    ts.assert_no_values().assert_complete()
    assert probe.cancels == 1
    failed = TestSubscriber[int](initial_request=5)
    Flux.range(0, 5).take_until(Flux.error(OSError("early"))).subscribe(failed)
    failed.assert_no_values().assert_error(OSError)


def test_take_until_other_that_completes_empty_changes_nothing() -> None:
    ts = TestSubscriber[int](initial_request=5)
    Flux.range(0, 3).take_until(Flux.empty()).subscribe(ts)
    ts.assert_values(0, 1, 2).assert_complete()


def test_skip_until_drops_until_other_emits() -> None:
    probe = Probe(3)
    other = _Signal()
    ts = TestSubscriber[int]()
    Flux.from_publisher(probe).skip_until(other).subscribe(ts)
    ts.request(1)
    ts.assert_no_values().assert_complete()
    assert probe.requests == [1, 1, 1, 1]  # the first, then one replacement per drop
    other2 = _Signal()
    ts2 = TestSubscriber[int]()
    Flux.range(0, 5).skip_until(other2).subscribe(ts2)
    other2.fire()
    assert other2.cancelled
    ts2.request(2)
    ts2.assert_values(0, 1)


def test_skip_until_replaces_dropped_items() -> None:
    source_items: list[int] = []
    other = _Signal()
    ts = TestSubscriber[int](initial_request=1)
    (
        Flux.range(0, 10)
        .do_on_next(source_items.append)
        .do_on_next(lambda x: other.fire() if x == 3 else None)
        .skip_until(other)
        .subscribe(ts)
    )
    ts.assert_values(3).assert_not_terminated()  # 3 opened the gate on its way


def test_skip_until_cancel_and_errors() -> None:
    probe = Probe(100)
    other = _Signal()
    ts = TestSubscriber[int]()  # no demand yet: the stream is still running when it cancels
    Flux.from_publisher(probe).skip_until(other).subscribe(ts)
    ts.cancel()
    assert probe.cancels == 1
    assert other.cancelled
    other2 = _Signal()
    ts2 = TestSubscriber[int](initial_request=1)
    Flux.never().skip_until(other2).subscribe(ts2)
    other2.fail(OSError("other"))
    ts2.assert_error(OSError)
    ts3 = TestSubscriber[int](initial_request=5)
    Flux.from_publisher(Probe(1, KeyError("main"))).skip_until(Flux.just(1)).subscribe(ts3)
    ts3.assert_error(KeyError)


async def test_take_until_with_async_other() -> None:
    gate = asyncio.Event()

    async def trigger() -> object:
        await gate.wait()
        yield 1

    ts = TestSubscriber[int](initial_request=1)
    Flux.never().take_until(Flux.from_async_iterable(trigger())).subscribe(ts)  # type: ignore[arg-type]
    gate.set()
    await ts.wait_terminated()
    ts.assert_complete()
