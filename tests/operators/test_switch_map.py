"""switch_map: demand, switching, cancellation, raising function, outer and inner errors."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

from reactive_aio import MAX_DEMAND, Flux, Publisher, Subscriber, Subscription
from reactive_aio.testing import TestSubscriber

from ._probe import Probe


def test_switch_map_waits_for_demand() -> None:
    ts = TestSubscriber[int]()
    Flux.just(1).switch_map(lambda x: Flux.range(x, 3)).subscribe(ts)
    ts.assert_no_values()
    ts.request(1)
    ts.assert_values(1).assert_not_terminated()
    ts.request(5)
    ts.assert_values(1, 2, 3).assert_complete()


def test_switch_map_requests_outer_unbounded_and_inner_prefetch() -> None:
    outer = Probe(Flux.never())
    ts = TestSubscriber[int]()
    Flux(outer).switch_map(Flux.just, prefetch=4).subscribe(ts)
    assert outer.requests == [MAX_DEMAND]


async def test_switch_map_new_item_cancels_the_previous_inner() -> None:
    inners: list[Probe[int]] = [Probe(Flux.never()), Probe(Flux.range(100, 2))]
    first_subscribed = asyncio.Event()

    async def outer_items() -> AsyncIterator[int]:
        yield 0
        await first_subscribed.wait()
        yield 1

    def pick(i: int) -> Publisher[int]:
        if i == 0:
            first_subscribed.set()
        return inners[i]

    ts = TestSubscriber[int](initial_request=10)
    Flux.from_async_iterable(outer_items()).switch_map(pick).subscribe(ts)
    await ts.wait_terminated()
    ts.assert_values(100, 101).assert_complete()
    assert inners[0].cancels == 1


def test_switch_map_drops_queued_items_of_a_replaced_inner() -> None:
    ts = TestSubscriber[int]()
    Flux.range(0, 3).switch_map(lambda x: Flux.range(10 * x, 2)).subscribe(ts)
    ts.request(10)
    ts.assert_values(20, 21).assert_complete()  # 0's and 1's queued items were dropped


def test_switch_map_cancel_cancels_inner_and_outer() -> None:
    outer = Probe(Flux.concat(Flux.just(1), Flux.never()))
    inner = Probe(Flux.never())
    ts = TestSubscriber[int](initial_request=1)
    Flux(outer).switch_map(lambda _: inner).subscribe(ts)
    ts.cancel()
    assert (outer.cancels, inner.cancels) == (1, 1)


def test_switch_map_raising_function_cancels_then_errors() -> None:
    outer = Probe(Flux.range(0, 5))
    ts = TestSubscriber[int](initial_request=10)
    Flux(outer).switch_map(lambda x: Flux.just(6 // (2 - x))).subscribe(ts)
    ts.assert_error(ZeroDivisionError)
    assert outer.cancels == 1


def test_switch_map_outer_and_inner_errors() -> None:
    ts = TestSubscriber[int](initial_request=10)
    Flux.error(OSError("outer")).switch_map(Flux.just).subscribe(ts)
    ts.assert_error(OSError, match="outer")
    outer = Probe(Flux.range(0, 3))
    ts2 = TestSubscriber[int](initial_request=10)
    Flux(outer).switch_map(lambda _: Flux.error(OSError("inner"))).subscribe(ts2)
    ts2.assert_error(OSError, match="inner")
    assert outer.cancels == 1


class _DrivenOuter(Publisher[int]):
    """An outer source the test drives by hand: it signals whenever told to."""

    def __init__(self) -> None:
        self.subscriber: Subscriber[int] | None = None

    def subscribe(self, subscriber: Subscriber[int]) -> None:
        self.subscriber = subscriber
        subscriber.on_subscribe(_Ignored())


class _Ignored(Subscription):
    def request(self, n: int) -> None:
        pass

    def cancel(self) -> None:
        pass


def test_a_switch_while_a_sync_inner_emits_stops_pulling_it() -> None:
    outer = _DrivenOuter()
    pulled: list[int] = []

    def items(start: int) -> Iterator[int]:
        for x in range(start, start + 100):
            pulled.append(x)
            yield x

    def switch_on_third(item: int) -> None:
        if item == 2:
            assert outer.subscriber is not None
            outer.subscriber.on_next(1)  # switches while inner 0 is being pulled

    ts = TestSubscriber[int](initial_request=6, on_next_callback=switch_on_third)
    Flux(outer).switch_map(lambda i: Flux.from_iterable(items(100 * i))).subscribe(ts)
    assert outer.subscriber is not None
    outer.subscriber.on_next(0)
    ts.assert_values(0, 1, 2, 100, 101, 102)
    assert [x for x in pulled if x < 100] == [0, 1, 2]  # never advanced after the switch
    outer.subscriber.on_complete()
    ts.request(200)
    assert ts.values == [0, 1, 2, *range(100, 200)]
    ts.assert_complete()
