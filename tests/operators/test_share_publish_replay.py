"""share, publish (connect, ref_count, auto_connect) and replay."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable
from typing import assert_type

import anyio
import pytest

from reactive_aio import (
    Flux,
    MulticastProcessor,
    Processor,
    ReplayProcessor,
    Subscriber,
    UnicastProcessor,
)
from reactive_aio.testing import TestSubscriber


class _Counted:
    """A source that counts subscriptions and cancellations."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.subscriptions = 0
        self.cancels = 0

    def subscribe(self, subscriber: Subscriber[int]) -> None:
        self.subscriptions += 1
        Flux.range(0, self.n).subscribe(subscriber)


class _Never:
    """Never emits; records cancellation."""

    def __init__(self) -> None:
        self.subscriptions = 0
        self.cancelled = 0

    def subscribe(self, subscriber: Subscriber[int]) -> None:
        self.subscriptions += 1
        subscriber.on_subscribe(self)

    def request(self, n: int) -> None:
        pass

    def cancel(self) -> None:
        self.cancelled += 1


def test_share_subscribes_once_and_moves_in_lockstep() -> None:
    source = _Counted(10)
    shared = Flux.from_publisher(source).share(buffer_size=4)
    a = TestSubscriber[int]()
    b = TestSubscriber[int]()
    shared.subscribe(a)
    shared.subscribe(b)
    assert source.subscriptions == 1
    a.request(100)
    a.assert_no_values()  # b has no demand yet
    b.request(3)
    a.assert_values(0, 1, 2)
    b.request(100)
    a.assert_values(*range(10)).assert_complete()
    b.assert_values(*range(10)).assert_complete()


def test_share_last_cancel_disconnects_and_next_reconnects() -> None:
    source = _Never()
    shared = Flux.from_publisher(source).share()
    a = TestSubscriber[int](initial_request=1)
    b = TestSubscriber[int](initial_request=1)
    shared.subscribe(a)
    shared.subscribe(b)
    a.cancel()
    assert source.cancelled == 0
    b.cancel()
    assert source.cancelled == 1
    c = TestSubscriber[int](initial_request=1)
    shared.subscribe(c)
    assert source.subscriptions == 2


def test_share_upstream_error_and_raising_subscriber() -> None:
    failed = TestSubscriber[int](initial_request=1)
    Flux.error(OSError("down")).share().subscribe(failed)
    failed.assert_error(OSError)

    def boom(item: int) -> None:
        raise ValueError("no")

    bad = TestSubscriber[int](initial_request=5, on_next_callback=boom)
    source = _Never()
    Flux.from_publisher(source).share().subscribe(bad)
    bad.assert_no_values()
    Flux.range(0, 3).share().subscribe(bad)  # second subscription: cancelled (rule 2.5)


def test_publish_waits_for_connect_and_dispose_fails_subscribers() -> None:
    source = _Never()
    connectable = Flux.from_publisher(source).publish()
    ts = TestSubscriber[int](initial_request=1)
    connectable.subscribe(ts)
    assert source.subscriptions == 0
    connection = connectable.connect()
    assert connectable.connect() is connection
    assert source.subscriptions == 1
    connection.dispose()
    assert connection.disposed
    assert source.cancelled == 1
    ts.assert_error(anyio.ClosedResourceError)


def test_publish_connect_delivers_and_reconnects_after_termination() -> None:
    source = _Counted(3)
    connectable = Flux.from_publisher(source).publish()
    ts = TestSubscriber[int](initial_request=10)
    connectable.subscribe(ts)
    connectable.connect()
    ts.assert_values(0, 1, 2).assert_complete()
    again = TestSubscriber[int](initial_request=10)
    connectable.subscribe(again)
    connectable.connect()
    again.assert_values(0, 1, 2).assert_complete()
    assert source.subscriptions == 2


def test_ref_count_and_auto_connect_thresholds() -> None:
    source = _Counted(2)
    flux = Flux.from_publisher(source).publish().ref_count(2)
    a = TestSubscriber[int](initial_request=10)
    flux.subscribe(a)
    assert source.subscriptions == 0
    b = TestSubscriber[int](initial_request=10)
    flux.subscribe(b)
    a.assert_values(0, 1).assert_complete()
    b.assert_values(0, 1).assert_complete()
    auto_source = _Never()
    auto = Flux.from_publisher(auto_source).publish().auto_connect(2)
    c = TestSubscriber[int](initial_request=1)
    auto.subscribe(c)
    assert auto_source.subscriptions == 0
    d = TestSubscriber[int](initial_request=1)
    auto.subscribe(d)
    assert auto_source.subscriptions == 1
    c.cancel()
    d.cancel()
    assert auto_source.cancelled == 0  # auto_connect never disconnects on its own
    with pytest.raises(ValueError, match="n > 0"):
        Flux.range(0, 1).publish().ref_count(0)


def test_replay_serves_late_subscribers_after_completion() -> None:
    source = _Counted(5)
    replayed = Flux.from_publisher(source).replay(2)
    replayed.connect()
    late = TestSubscriber[int]()
    replayed.subscribe(late)
    late.request(1)
    late.assert_values(3)
    late.request(1)
    late.assert_values(3, 4).assert_complete()
    assert source.subscriptions == 1


def test_chains_keep_their_element_type() -> None:
    flux = Flux.just("a", "b")
    assert_type(flux.publish_on(), Flux[str])
    assert_type(flux.limit_rate(4), Flux[str])
    assert_type(flux.on_backpressure_buffer(4), Flux[str])
    assert_type(flux.on_backpressure_drop(), Flux[str])
    assert_type(flux.on_backpressure_latest(), Flux[str])
    assert_type(flux.on_backpressure_error(), Flux[str])
    assert_type(flux.share(), Flux[str])
    assert_type(flux.publish().ref_count(), Flux[str])
    assert_type(flux.publish().auto_connect(), Flux[str])
    assert_type(flux.replay(2).auto_connect(), Flux[str])


def test_cancelled_subscribers_are_not_retained() -> None:
    """Rule 3.13: after cancel the processors hold no strong reference to the subscriber."""
    processors: list[Processor[int, int]] = [
        MulticastProcessor[int](4),
        ReplayProcessor[int](size=2, auto_cancel=False),
        UnicastProcessor[int](4),
    ]
    for processor in processors:
        ts = TestSubscriber[int](initial_request=1)
        processor.subscribe(ts)
        ref = weakref.ref(ts)
        ts.cancel()
        del ts
        gc.collect()
        assert ref() is None, type(processor).__name__


@pytest.mark.parametrize(
    "shared",
    [lambda f: f.share(), lambda f: f.publish().ref_count(), lambda f: f.replay(5).ref_count()],
    ids=["share", "publish_ref_count", "replay_ref_count"],
)
async def test_ref_count_over_a_synchronous_source_disconnects_when_its_subscriber_leaves(
    shared: Callable[[Flux[int]], Flux[int]],
) -> None:
    # The only subscriber leaves while connect() is still on the stack (range emits inside
    # it): upstream must be cancelled and the next subscriber must start afresh.
    source = _Counted(100)
    cancels: list[str] = []
    flux = shared(Flux.from_publisher(source).do_on_cancel(lambda: cancels.append("upstream")))
    assert await flux.take(10).to_list() == list(range(10))
    assert cancels == ["upstream"]
    assert await flux.take(10).to_list() == list(range(10))
    assert source.subscriptions == 2
