"""SyncSource and SyncInner: a synchronous source taken as an iterator by a QueueDrain's drain."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import attrs

from reactive_aio import Flux, NullSignalError, Publisher, Subscriber
from reactive_aio.lowlevel import QueueDrain, SyncInner, SyncSource
from reactive_aio.testing import TestSubscriber


@attrs.frozen
class _Squares(Publisher[int], SyncSource[int]):
    """A source written with the kit alone: subscribing is not supported, pulling is."""

    count: int
    pulled: list[int] = attrs.field(factory=list)

    def subscribe(self, subscriber: Subscriber[int]) -> None:
        raise AssertionError("a sync source is pulled, not subscribed")

    def sync_iterator(self) -> Iterator[int]:
        return self._squares()

    def _squares(self) -> Iterator[int]:
        for i in range(self.count):
            self.pulled.append(i)
            yield i * i


@attrs.define(eq=False)
class _Drain(QueueDrain[int]):
    """The smallest owner: emits one SyncInner's items and completes when it ends."""

    inner: SyncInner[int] | None = attrs.field(default=None, init=False)

    def _emit(self, limit: int) -> int:
        inner = self.inner
        assert inner is not None
        emitted = self._emit_from(inner.queue, limit)
        if inner.done and not self._done:
            self._end()
        return emitted

    def _release(self) -> None:
        if self.inner is not None:
            self.inner.cancel()


def _drain(iterator: Iterator[Any]) -> tuple[TestSubscriber[int], _Drain]:
    ts = TestSubscriber[int]()
    drain = _Drain(ts)
    drain.inner = SyncInner(drain, iterator)
    drain.start()
    return ts, drain


def test_a_source_written_with_the_kit_is_pulled_by_flat_map() -> None:
    sources = [_Squares(3), _Squares(2)]
    ts = TestSubscriber[int](initial_request=2)
    Flux.range(0, 2).concat_map(lambda i: sources[i]).subscribe(ts)
    ts.assert_values(0, 1)
    assert sources[0].pulled == [0, 1, 2]  # the third looked ahead: the range cannot tell its end
    ts.request(10)
    ts.assert_values(0, 1, 4, 0, 1).assert_complete()


def test_what_flux_hands_over() -> None:
    assert list(Flux.range(3, 3).sync_iterator() or ()) == [3, 4, 5]
    assert list(Flux.just("a", "b").map(str.upper).sync_iterator() or ()) == ["A", "B"]
    fused = Flux.from_iterable([1, 2, 3, 4]).filter(lambda x: x % 2 == 0).map(lambda x: -x)
    assert list(fused.sync_iterator() or ()) == [-2, -4]
    assert Flux.never().sync_iterator() is None
    assert Flux.range(0, 3).take(2).sync_iterator() is None  # not a fusable stage


def _recorded(count: int, pulled: list[int]) -> Iterator[int]:
    """``0 … count - 1``, each appended to *pulled* as it is pulled."""
    for i in range(count):
        pulled.append(i)
        yield i


def test_the_drain_pulls_only_what_it_emits_and_looks_ahead_at_its_limit() -> None:
    pulled: list[int] = []
    ts, _ = _drain(_recorded(5, pulled))
    assert pulled == [0]  # no demand: one item ahead, to learn whether it ended
    ts.request(2)
    ts.assert_values(0, 1).assert_not_terminated()
    assert pulled == [0, 1, 2]
    ts.request(3)
    ts.assert_values(0, 1, 2, 3, 4).assert_complete()  # the end found without more demand


def test_a_sized_iterator_ends_without_looking_ahead() -> None:
    iterator = iter([1, 2])
    ts, drain = _drain(iterator)
    ts.request(2)
    ts.assert_values(1, 2).assert_complete()
    assert drain.inner is not None
    assert drain.inner.pulled == 2


def test_none_and_failures_go_to_the_owner() -> None:
    ts, drain = _drain(iter([1, None, 3]))
    ts.request(5)
    ts.assert_values(1).assert_error(NullSignalError, match="rule 2.13: item #1 of the iterable")
    assert drain.inner is not None
    assert drain.inner.done

    def broken() -> Iterator[int]:
        yield 1
        raise OSError("disk gone")

    ts2, _ = _drain(broken())
    ts2.request(5)
    ts2.assert_values(1).assert_error(OSError, match="disk gone")


def test_cancel_stops_pulling() -> None:
    pulled: list[int] = []
    ts, drain = _drain(_recorded(100, pulled))
    ts.request(3)
    ts.cancel()
    ts.request(10)
    ts.assert_values(0, 1, 2)
    assert pulled == [0, 1, 2, 3]
    assert drain.inner is not None
    assert drain.inner.iterator is None


@attrs.define
class _Underestimating:
    """``1 … count`` whose length hint says nothing is left: PEP 424 allows a guess."""

    count: int
    pulled: int = 0

    def __iter__(self) -> _Underestimating:
        return self

    def __next__(self) -> int:
        if self.pulled == self.count:
            raise StopIteration
        self.pulled += 1
        return self.pulled

    def __length_hint__(self) -> int:
        return 0


async def test_an_inner_ends_when_its_iterator_stops_not_when_its_length_hint_says_so() -> None:
    inner = Flux.from_iterable(_Underestimating(5))
    items = [x async for x in Flux.just(0).concat_map(lambda _: inner).iterate(prefetch=2)]
    assert items == [1, 2, 3, 4, 5]
