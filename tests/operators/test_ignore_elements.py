"""ignore_elements: only the terminal signal. ``test_rxpy_*`` cases are ported from RxPY's
``tests/test_observable/test_ignoreelements.py``."""

from __future__ import annotations

from reactive_aio import Flux
from reactive_aio.testing import TestPublisher, TestSubscriber

from ._transform_support import Probe


async def test_rxpy_ignore_values_basic() -> None:
    publisher = TestPublisher[int].create()
    ts = TestSubscriber[int]()
    Flux.from_publisher(publisher).ignore_elements().subscribe(ts)
    publisher.next(2, 3, 4)
    ts.assert_no_values().assert_not_terminated()
    publisher.assert_not_cancelled()


async def test_rxpy_ignore_values_completed() -> None:
    ts = TestSubscriber[int]()
    Flux.range(0, 9).ignore_elements().subscribe(ts)
    ts.assert_no_values().assert_complete()


async def test_rxpy_ignore_values_error() -> None:
    ts = TestSubscriber[int]()
    Flux.from_publisher(Probe(9, OSError("ex"))).ignore_elements().subscribe(ts)
    ts.assert_no_values().assert_error(OSError)


async def test_ignore_elements_asks_for_everything_without_downstream_demand() -> None:
    probe = Probe(5)
    ts = TestSubscriber[int]()
    Flux.from_publisher(probe).ignore_elements().subscribe(ts)
    assert probe.requests == [2**63 - 1]
    ts.assert_complete()


async def test_ignore_elements_bad_request_fails() -> None:
    ts = TestSubscriber[int]()
    Flux.never().ignore_elements().subscribe(ts)
    ts.request(0)
    ts.assert_error(ValueError)


async def test_ignore_elements_cancel_cancels_upstream() -> None:
    probe_publisher = TestPublisher[int].create()
    ts = TestSubscriber[int]()
    Flux.from_publisher(probe_publisher).ignore_elements().subscribe(ts)
    ts.cancel()
    probe_publisher.assert_cancelled()
