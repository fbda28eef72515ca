"""The aggregate terminals: count, all, any, contains, is_empty, to_dict, to_multidict,
to_sorted_list. Cases named ``test_rxpy_*`` are ported from RxPY's ``tests/test_observable``
(``test_<operator>.py``), ``test_reactor_*`` from reactor-core's tests."""

from __future__ import annotations

import asyncio

import pytest

from reactive_aio import Flux
from reactive_aio.testing import TestPublisher

from ..operators._transform_support import Probe


async def test_count() -> None:
    assert await Flux.range(0, 7).count() == 7
    assert await Flux.empty().count() == 0


async def test_rxpy_count_some() -> None:
    """The count arrives with the completion, not before."""
    publisher = TestPublisher[int].create()
    answer = asyncio.ensure_future(Flux.from_publisher(publisher).count())
    await asyncio.sleep(0)
    publisher.next(2, 3, 4)
    await asyncio.sleep(0)
    assert not answer.done()
    publisher.complete()
    assert await answer == 3


async def test_rxpy_count_on_error() -> None:
    with pytest.raises(OSError, match="ex"):
        await Flux.from_publisher(Probe(3, OSError("ex"))).count()


async def test_rxpy_count_never() -> None:
    publisher = TestPublisher[int].create()
    answer = asyncio.ensure_future(Flux.from_publisher(publisher).count())
    for _ in range(5):
        await asyncio.sleep(0)
    assert not answer.done()
    answer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await answer
    publisher.assert_cancelled()


async def test_rxpy_count_predicate_some_even() -> None:
    """RxPY's ``count(predicate)`` is ``filter(predicate).count()`` here."""
    assert await Flux.just(2, 3, 4).filter(lambda x: x % 2 == 0).count() == 2


async def test_rxpy_all_empty() -> None:
    assert await Flux.empty().all(lambda x: x > 0) is True


async def test_rxpy_all_some_all_match() -> None:
    assert await Flux.just(2, 3, 4).all(lambda x: x > 0) is True


async def test_rxpy_all_some_match() -> None:
    """The first failing item answers False and cancels the rest (RxPY completes at 210)."""
    probe = Probe(10)
    assert await Flux.from_publisher(probe).map(lambda x: x - 2).all(lambda x: x < 0) is False
    assert probe.cancels == 1


async def test_rxpy_any_predicate_some_match() -> None:
    """True at the first matching item, before the source completes; the rest is cancelled."""
    publisher = TestPublisher[int].create()
    answer = asyncio.ensure_future(Flux.from_publisher(publisher).any(lambda x: x > 0))
    await asyncio.sleep(0)
    publisher.next(-2)
    await asyncio.sleep(0)
    assert not answer.done()
    publisher.next(3)
    assert await answer is True
    publisher.assert_cancelled()


async def test_rxpy_any_predicate_some_none_match() -> None:
    assert await Flux.just(-2, -3, -4).any(lambda x: x > 0) is False


async def test_rxpy_any_predicate_empty() -> None:
    assert await Flux.empty().any(lambda x: x > 0) is False


async def test_rxpy_any_predicate_throw() -> None:
    with pytest.raises(OSError, match="ex"):
        await Flux.error(OSError("ex")).any(lambda x: x > 0)


async def test_any_cancels_a_long_source_at_the_match() -> None:
    probe = Probe(100)
    assert await Flux.from_publisher(probe).any(lambda x: x == 3) is True
    assert probe.cancels == 1


async def test_all_raising_predicate_cancels_and_raises() -> None:
    probe = Probe(10)
    with pytest.raises(ZeroDivisionError):
        await Flux.from_publisher(probe).all(lambda x: 1 // (x - 2) < 5)
    assert probe.cancels == 1


async def test_rxpy_contains_empty() -> None:
    assert await Flux.empty().contains(42) is False


async def test_rxpy_contains_some_positive() -> None:
    publisher = TestPublisher[int].create()
    answer = asyncio.ensure_future(Flux.from_publisher(publisher).contains(3))
    await asyncio.sleep(0)
    publisher.next(2, 3)
    assert await answer is True
    publisher.assert_cancelled()


async def test_rxpy_contains_some_negative() -> None:
    assert await Flux.just(2, 3, 4).contains(-3) is False


async def test_rxpy_contains_on_error() -> None:
    with pytest.raises(OSError, match="ex"):
        await Flux.error(OSError("ex")).contains(42)


async def test_rxpy_is_empty_empty() -> None:
    assert await Flux.empty().is_empty() is True


async def test_rxpy_is_empty_return_asks_for_one_and_cancels() -> None:
    probe = Probe(100)
    assert await Flux.from_publisher(probe).is_empty() is False
    assert probe.requests == [1]
    assert probe.cancels == 1


async def test_rxpy_is_empty_on_error() -> None:
    with pytest.raises(KeyError):
        await Flux.error(KeyError("ex")).is_empty()


async def test_rxpy_to_dict_completed() -> None:
    """RxPY's ``to_dict(key_mapper, element_mapper)``."""
    assert await Flux.range(2, 4).to_dict(lambda x: x * 2, lambda x: x * 4) == {
        4: 8,
        6: 12,
        8: 16,
        10: 20,
    }


async def test_to_dict_later_keys_replace_earlier_ones() -> None:
    words = Flux.just("a", "bb", "cc", "ddd")
    assert await words.to_dict(len) == {1: "a", 2: "cc", 3: "ddd"}


async def test_rxpy_to_dict_keymapperthrows() -> None:
    probe = Probe(10)

    def key(x: int) -> int:
        if x < 3:
            return x * 2
        raise KeyError(x)

    with pytest.raises(KeyError):
        await Flux.from_publisher(probe).to_dict(key, lambda x: x * 4)
    assert probe.cancels == 1


async def test_reactor_collect_multi_map() -> None:
    """reactor-core's ``MonoCollectMapTest.collectMultiMap`` (and ``collectMultiMapEmpty``)."""
    pojos = Flux.just(("test", 1), ("test", 2), ("test2", 3))
    assert await pojos.to_multidict(lambda p: p[0]) == {
        "test": [("test", 1), ("test", 2)],
        "test2": [("test2", 3)],
    }
    assert await pojos.to_multidict(lambda p: p[0], lambda p: p[1]) == {
        "test": [1, 2],
        "test2": [3],
    }
    assert await Flux.empty().to_multidict(str) == {}


async def test_to_sorted_list() -> None:
    """Spelled like `sorted`: a key and *reverse* instead of a comparator."""
    numbers = Flux.just(3, 1, 4, 1, 5)
    assert await numbers.to_sorted_list() == [1, 1, 3, 4, 5]
    assert await numbers.to_sorted_list(lambda x: -x) == [5, 4, 3, 1, 1]
    assert await Flux.just("bb", "a", "ccc").to_sorted_list(key=len) == ["a", "bb", "ccc"]


async def test_rxjava_sorted_list() -> None:
    """RxJava's ``FlowableToSortedListTest.sortedList``."""
    assert await Flux.just(1, 3, 2, 5, 4).to_sorted_list() == [1, 2, 3, 4, 5]


async def test_rxjava_sorted_list_with_custom_function() -> None:
    """RxJava's ``sortedListWithCustomFunction`` (a descending comparator: *reverse* here)."""
    assert await Flux.just(1, 3, 2, 5, 4).to_sorted_list(reverse=True) == [5, 4, 3, 2, 1]


async def test_to_sorted_list_of_incomparable_items_raises() -> None:
    with pytest.raises(TypeError):
        await Flux.just(1, "a").to_sorted_list()
