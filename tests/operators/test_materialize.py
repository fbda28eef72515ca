"""materialize and dematerialize. ``test_rxpy_*`` cases are ported from RxPY's
``test_materialize.py``."""

from __future__ import annotations

import pytest

from reactive_aio import Flux, Notification
from reactive_aio.testing import TestPublisher, TestSubscriber

from ._transform_support import Probe


async def test_rxpy_materialize_empty() -> None:
    assert await Flux.empty().materialize().to_list() == [Notification("complete")]


async def test_rxpy_materialize_return() -> None:
    assert await Flux.just(2).materialize().to_list() == [
        Notification("next", 2),
        Notification("complete"),
    ]


async def test_rxpy_materialize_throw() -> None:
    error = OSError("ex")
    assert await Flux.error(error).materialize().to_list() == [Notification("error", error=error)]


async def test_rxpy_materialize_dematerialize_never() -> None:
    ts = TestSubscriber[int](initial_request=5)
    Flux.never().materialize().dematerialize().subscribe(ts)
    ts.assert_no_values().assert_not_terminated()
    ts.cancel()


async def test_rxpy_materialize_dematerialize_return() -> None:
    assert await Flux.just(2, 3).materialize().dematerialize().to_list() == [2, 3]


async def test_rxpy_materialize_dematerialize_throw() -> None:
    ts = TestSubscriber[int](initial_request=5)
    Flux.from_publisher(Probe(1, OSError("ex"))).materialize().dematerialize().subscribe(ts)
    ts.assert_values(0).assert_error(OSError)


async def test_materialize_holds_the_terminal_notification_until_requested() -> None:
    source = TestPublisher[int].create()
    ts = TestSubscriber[Notification[int]](initial_request=1)
    Flux.from_publisher(source).materialize().subscribe(ts)
    source.assert_requested(1)
    source.next(5)
    source.complete()
    ts.assert_values(Notification("next", 5)).assert_not_terminated()
    ts.request(1)
    ts.assert_values(Notification("next", 5), Notification("complete")).assert_complete()


async def test_materialize_bad_request_is_an_error_signal() -> None:
    ts = TestSubscriber[Notification[int]]()
    Flux.never().materialize().subscribe(ts)
    ts.request(-1)
    ts.assert_no_values().assert_error(ValueError)


async def test_dematerialize_complete_notification_cancels_upstream() -> None:
    source = TestPublisher[Notification[int]].create()
    ts = TestSubscriber[int](initial_request=5)
    Flux.from_publisher(source).dematerialize().subscribe(ts)
    source.next(Notification("next", 1), Notification("complete"))
    ts.assert_values(1).assert_complete()
    source.assert_cancelled()


def test_notification_checks_its_fields() -> None:
    with pytest.raises(ValueError, match="notification"):
        Notification("next")
    with pytest.raises(ValueError, match="notification"):
        Notification("error")
    with pytest.raises(ValueError, match="notification"):
        Notification("complete", 1)
