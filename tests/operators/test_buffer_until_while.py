"""buffer_until and buffer_while: lists cut by a predicate. ``test_reactor_*`` cases are ported
from reactor-core's ``FluxBufferPredicateTest``."""

from __future__ import annotations

from reactive_aio import Flux
from reactive_aio.testing import TestPublisher, TestSubscriber

from ._transform_support import Probe


def _driven(
    build: str, cut_before: bool = False
) -> tuple[TestPublisher[int], TestSubscriber[list[int]]]:
    source = TestPublisher[int].create()
    ts = TestSubscriber[list[int]](initial_request=100)
    flux = Flux.from_publisher(source)
    if build == "until":
        flux.buffer_until(lambda i: i % 3 == 0, cut_before=cut_before).subscribe(ts)
    else:
        flux.buffer_while(lambda i: i % 3 != 0).subscribe(ts)
    return source, ts


async def test_reactor_normal_until() -> None:
    source, ts = _driven("until")
    source.next(1, 2)
    ts.assert_no_values()
    source.next(3)
    ts.assert_values([1, 2, 3])
    source.next(4, 5, 6)
    ts.assert_values([1, 2, 3], [4, 5, 6])
    source.next(7, 8)
    source.complete()
    ts.assert_values([1, 2, 3], [4, 5, 6], [7, 8]).assert_complete()


async def test_reactor_normal_until_cut_before() -> None:
    source, ts = _driven("until", cut_before=True)
    source.next(1, 2, 3)
    ts.assert_values([1, 2])
    source.next(4, 5, 6)
    ts.assert_values([1, 2], [3, 4, 5])
    source.next(7, 8)
    source.complete()
    ts.assert_values([1, 2], [3, 4, 5], [6, 7, 8]).assert_complete()


async def test_reactor_normal_while() -> None:
    source, ts = _driven("while")
    source.next(1, 2, 3)
    ts.assert_values([1, 2])
    source.next(4, 5, 6)
    ts.assert_values([1, 2], [4, 5])
    source.next(7, 8)
    source.complete()
    ts.assert_values([1, 2], [4, 5], [7, 8]).assert_complete()


async def test_buffer_while_emits_no_empty_lists() -> None:
    lists = await Flux.just(0, 3, 1, 6, 9, 2).buffer_while(lambda i: i % 3 != 0).to_list()
    assert lists == [[1], [2]]


async def test_buffer_until_asks_one_item_per_list_and_replaces_the_rest() -> None:
    probe = Probe(10)
    ts = TestSubscriber[list[int]](initial_request=1)
    Flux.from_publisher(probe).buffer_until(lambda i: i == 2).subscribe(ts)
    ts.assert_values([0, 1, 2])
    assert probe.requests == [1, 1, 1]
    ts.request(1)  # no later item passes: the rest is pulled one by one, then completes
    ts.assert_values([0, 1, 2], [3, 4, 5, 6, 7, 8, 9]).assert_complete()
    assert probe.requests == [1] * 11  # the downstream request, then one per item kept


async def test_the_last_list_waits_for_demand() -> None:
    source = TestPublisher[int].create()
    ts = TestSubscriber[list[int]](initial_request=1)
    Flux.from_publisher(source).buffer_until(lambda i: i == 3, cut_before=True).subscribe(ts)
    source.next(1, 3)  # 3 emits [1] and opens the next list, no demand left
    source.complete()
    ts.assert_values([1]).assert_not_terminated()
    ts.request(1)
    ts.assert_values([1], [3]).assert_complete()


async def test_raising_predicate_cancels_and_fails() -> None:
    probe = Probe(10)
    ts = TestSubscriber[list[int]](initial_request=5)
    Flux.from_publisher(probe).buffer_while(lambda i: 1 // (i - 2) < 9).subscribe(ts)
    ts.assert_no_values().assert_error(ZeroDivisionError)
    assert probe.cancels == 1


async def test_upstream_error_drops_the_open_list() -> None:
    ts = TestSubscriber[list[int]](initial_request=5)
    Flux.from_publisher(Probe(2, OSError("x"))).buffer_until(lambda i: False).subscribe(ts)
    ts.assert_no_values().assert_error(OSError)
