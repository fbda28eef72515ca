"""QueueDrain and QueueSubscriber: bounded queues, batched replenishment, one drain; a fixed
series of sources (`QueueDrain.subscribe_all`) and an outer source (`OuterDrain`, the library's
own configuration of the queue mechanism)."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from reactive_aio import Flux, MissingBackpressureError, Publisher, Subscriber, Subscription
from reactive_aio._core import OuterDrain
from reactive_aio.lowlevel import QueueDrain, QueueSubscriber, replenish_threshold
from reactive_aio.testing import TestPublisher, TestSubscriber


@attrs.define(eq=False)
class _Recording(Subscription):
    """An upstream subscription that records requests and lets the test push signals."""

    requests: list[int] = attrs.field(factory=list)
    cancelled: bool = False

    def request(self, n: int) -> None:
        self.requests.append(n)

    def cancel(self) -> None:
        self.cancelled = True


@attrs.define(eq=False)
class _Relay(QueueDrain[int]):
    """The smallest QueueDrain: relays one QueueSubscriber's items."""

    inner: QueueSubscriber[int] | None = attrs.field(default=None, init=False)

    def _emit(self, limit: int) -> int:
        inner = self.inner
        assert inner is not None
        downstream = self._downstream
        assert downstream is not None
        emitted = 0
        while emitted < limit and inner.queue:
            downstream.on_next(inner.poll())
            emitted += 1
            if self._done:
                return emitted
        if inner.done and not inner.queue:
            self._complete()
        return emitted

    def _release(self) -> None:
        if self.inner is not None:
            self.inner.cancel()


def _relay(ts: Subscriber[int], prefetch: int) -> tuple[_Relay, _Recording]:
    relay = _Relay(ts)
    relay.inner = QueueSubscriber[int](relay, prefetch)
    relay.start()
    upstream = _Recording()
    relay.inner.on_subscribe(upstream)
    return relay, upstream


def test_replenish_threshold_is_three_quarters() -> None:
    assert replenish_threshold(32) == 24
    assert replenish_threshold(1) == 1
    assert replenish_threshold(2**63 - 1) == 0


def test_prefetch_then_replenish_in_batches() -> None:
    ts = TestSubscriber[int]()
    relay, upstream = _relay(ts, 8)
    assert relay.inner is not None
    assert upstream.requests == [8]
    for i in range(8):
        relay.inner.on_next(i)
    ts.assert_no_values()  # no demand yet: the items wait in the bounded queue
    ts.request(5)
    ts.assert_values(0, 1, 2, 3, 4)
    assert upstream.requests == [8]  # 5 consumed < 6 (three quarters of 8)
    ts.request(1)
    assert upstream.requests == [8, 6]  # one batch, not six requests of 1
    relay.inner.on_complete()
    ts.request(10)
    ts.assert_values(*range(8)).assert_complete()


def test_overflowing_source_is_a_missing_backpressure_error() -> None:
    ts = TestSubscriber[int]()
    relay, upstream = _relay(ts, 2)
    assert relay.inner is not None
    relay.inner.on_next(1)
    relay.inner.on_next(2)
    relay.inner.on_next(3)
    ts.assert_error(MissingBackpressureError, match="rule 1.1")
    assert upstream.cancelled


def test_none_item_is_an_error_naming_the_rule() -> None:
    ts = TestSubscriber[int](initial_request=1)
    relay, _ = _relay(ts, 2)
    assert relay.inner is not None
    relay.inner.on_next(None)  # type: ignore[arg-type]
    ts.assert_error(TypeError, match="rule 2.13")


def test_error_cancels_and_signals_once() -> None:
    ts = TestSubscriber[int](initial_request=1)
    relay, upstream = _relay(ts, 4)
    assert relay.inner is not None
    relay.inner.on_next(1)
    relay._fail(OSError("first"))
    relay._fail(OSError("second"))  # reported, not signalled
    ts.assert_values(1).assert_error(OSError, match="first")
    assert upstream.cancelled


def test_cancel_drops_the_queue_and_ignores_late_items() -> None:
    ts = TestSubscriber[int]()
    relay, upstream = _relay(ts, 4)
    inner = relay.inner
    assert inner is not None
    inner.on_next(1)
    ts.cancel()
    assert upstream.cancelled
    assert not inner.queue
    inner.on_next(2)
    ts.request(1)
    ts.assert_no_values().assert_not_terminated()


def test_requests_from_inside_on_next_keep_depth_one() -> None:
    ts = TestSubscriber[int](initial_request=1)
    ts.on_next_callback = lambda _: ts.request(1)
    relay = _Relay(ts)
    relay.inner = QueueSubscriber[int](relay, 16)
    relay.start()
    Flux.range(0, 10_000).subscribe(relay.inner)
    ts.assert_value_count(10_000).assert_complete().assert_max_depth(1)


def test_non_positive_prefetch_is_rejected() -> None:
    relay: Any = _Relay(TestSubscriber[int]())
    with pytest.raises(ValueError, match="prefetch"):
        QueueSubscriber[int](relay, 0)


@attrs.define(eq=False)
class _Alternate(QueueDrain[int]):
    """Takes one item from each source in turn (zip's shape, without the tuples)."""

    turn: int = attrs.field(default=0, init=False)

    def _emit(self, limit: int) -> int:
        downstream = self._downstream
        assert downstream is not None
        emitted = 0
        while emitted < limit and (inner := self.inners[self.turn]).queue:
            downstream.on_next(inner.poll())
            emitted += 1
            self.turn = (self.turn + 1) % len(self.inners)
        if self.inners[self.turn].done and not self.inners[self.turn].queue:
            self._end()
        return emitted

    def _release(self) -> None:
        for inner in self.inners:
            inner.cancel()


async def test_subscribe_all_gives_each_source_a_queue_by_position() -> None:
    ts = TestSubscriber[int](initial_request=10)
    drain = _Alternate(ts)
    drain.subscribe_all([Flux.just(1, 3, 5), Flux.just(2, 4)], 2)
    assert [inner.index for inner in drain.inners] == [0, 1]
    ts.assert_values(1, 2, 3, 4, 5).assert_complete()


async def test_subscribe_all_stops_once_the_drain_has_ended() -> None:
    ts = TestSubscriber[int](initial_request=10)
    ts.on_next_callback = lambda _: ts.cancel()
    later = TestPublisher[int].create()
    _Alternate(ts).subscribe_all([Flux.just(1), later], 2)
    ts.assert_values(1)
    later.assert_subscribers(0)


async def test_delay_errors_lets_the_other_sources_finish_first() -> None:
    ts = TestSubscriber[int](initial_request=10)
    drain = _Alternate(ts, delay_errors=True)
    failing = Flux.just(1).concat_with(Flux.error(OSError("late")))
    drain.subscribe_all([failing, Flux.just(2)], 2)
    ts.assert_values(1, 2).assert_error(OSError, match="late")


@attrs.define(eq=False)
class _Merge(OuterDrain[Publisher[int], int]):
    """flat_map's shape over publishers: at most two inner sources at a time."""

    running: list[QueueSubscriber[int]] = attrs.field(factory=list, init=False)

    def _outer_started(self, subscription: Subscription) -> None:
        subscription.request(2)

    def on_next(self, item: Publisher[int]) -> None:
        inner = QueueSubscriber[int](self, 4)
        self.running.append(inner)
        item.subscribe(inner)

    def _emit(self, limit: int) -> int:
        downstream = self._downstream
        assert downstream is not None
        emitted = 0
        for inner in self.running:
            while emitted < limit and inner.queue:
                downstream.on_next(inner.poll())
                emitted += 1
        finished = [inner for inner in self.running if inner.done and not inner.queue]
        self.running = [inner for inner in self.running if inner not in finished]
        if self._outer_done and not self.running:
            self._end()
        elif finished and self._upstream is not None:
            self._upstream.request(len(finished))
        return emitted

    def _release(self) -> None:
        for inner in self.running:
            inner.cancel()
        upstream, self._upstream = self._upstream, None
        if upstream is not None:
            upstream.cancel()


async def test_an_outer_drain_turns_outer_items_into_inner_sources() -> None:
    outer = TestPublisher[Publisher[int]].create()
    ts = TestSubscriber[int]()
    outer.subscribe(_Merge(ts))
    assert outer.requests == [2]
    first, second = TestPublisher[int].create(), TestPublisher[int].create()
    outer.next(first, second)
    assert first.requests == second.requests == [4]
    first.next(1, 2)
    second.next(3)
    ts.request(2)
    ts.assert_values(1, 2)
    first.complete()
    assert outer.requests == [2, 1]  # a finished inner makes room for one more
    ts.request(5)
    outer.complete()
    second.complete()
    ts.assert_values(1, 2, 3).assert_complete()


async def test_an_outer_drain_fails_with_the_outer_source_and_cancels_the_inners() -> None:
    outer = TestPublisher[Publisher[int]].create()
    ts = TestSubscriber[int](initial_request=5)
    outer.subscribe(_Merge(ts))
    inner = TestPublisher[int].create()
    outer.next(inner)
    outer.error(OSError("outer"))
    ts.assert_error(OSError, match="outer")
    inner.assert_cancelled()


async def test_an_outer_drain_cancelled_downstream_cancels_outer_and_inners() -> None:
    outer = TestPublisher[Publisher[int]].create()
    ts = TestSubscriber[int](initial_request=5)
    outer.subscribe(_Merge(ts))
    inner = TestPublisher[int].create()
    outer.next(inner)
    ts.cancel()
    outer.assert_cancelled()
    inner.assert_cancelled()
