"""take_while: items until the predicate fails."""

from __future__ import annotations

from reactive_aio import Flux
from reactive_aio.testing import TestPublisher, TestSubscriber

from ._transform_support import Probe


def test_take_while_stops_at_first_failure_and_cancels() -> None:
    probe = Probe(100)
    ts = TestSubscriber[int]()
    Flux.from_publisher(probe).take_while(lambda x: x < 3).subscribe(ts)
    ts.assert_no_values()
    ts.request(1)
    ts.assert_values(0).assert_not_terminated()
    ts.request(10)
    ts.assert_values(0, 1, 2).assert_complete()
    assert probe.cancels == 1


def test_take_while_cancel() -> None:
    probe = Probe(100)
    ts = TestSubscriber[int](initial_request=1)
    Flux.from_publisher(probe).take_while(lambda x: True).subscribe(ts)
    ts.cancel()
    assert probe.cancels == 1


def test_take_while_raising_predicate() -> None:
    probe = Probe(10)
    ts = TestSubscriber[int](initial_request=10)
    Flux.from_publisher(probe).take_while(lambda x: 1 // (x - 1) < 5).subscribe(ts)
    ts.assert_values(0).assert_error(ZeroDivisionError)
    assert probe.cancels == 1


def test_take_while_upstream_error() -> None:
    ts = TestSubscriber[int](initial_request=10)
    Flux.from_publisher(Probe(2, OSError("x"))).take_while(lambda x: True).subscribe(ts)
    ts.assert_values(0, 1).assert_error(OSError)


async def test_rxpy_take_while_complete_after_inclusive_true() -> None:
    """RxPY's ``test_takewhile.py``: with ``inclusive=True`` the first failing item (4) is
    emitted, then the stream completes and upstream is cancelled; the predicate ran 6 times."""
    source = TestPublisher[int].create()
    calls: list[int] = []

    def is_prime(x: int) -> bool:
        calls.append(x)
        return x > 1 and all(x % d for d in range(2, x))

    ts = TestSubscriber[int](initial_request=100)
    Flux.from_publisher(source).take_while(is_prime, inclusive=True).subscribe(ts)
    source.next(2, 5, 13, 3, 7, 4)
    ts.assert_values(2, 5, 13, 3, 7, 4).assert_complete()
    source.assert_cancelled()
    assert len(calls) == 6


async def test_take_while_inclusive_keeps_demand_exact() -> None:
    probe = Probe(10)
    ts = TestSubscriber[int](initial_request=2)
    Flux.from_publisher(probe).take_while(lambda x: x < 1, inclusive=True).subscribe(ts)
    ts.assert_values(0, 1).assert_complete()
    assert probe.requests == [2]
