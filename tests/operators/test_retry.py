"""retry: resubscribe on error, carrying demand."""

from __future__ import annotations

import pytest

from reactive_aio import Flux
from reactive_aio.testing import TestSubscriber

from ._transform_support import Probe


def test_retry_resubscribes_requesting_only_outstanding_demand() -> None:
    probe = Probe(2, OSError("x"))
    ts = TestSubscriber[int](initial_request=5)
    Flux.from_publisher(probe).retry(1).subscribe(ts)
    ts.assert_values(0, 1, 0, 1).assert_error(OSError)
    assert probe.subscribes == 2
    assert probe.requests == [5, 3]


def test_retry_on_demand_then_gives_up() -> None:
    probe = Probe(1, OSError("x"))
    ts = TestSubscriber[int]()
    Flux.from_publisher(probe).retry(2).subscribe(ts)
    ts.request(1)
    ts.assert_values(0).assert_not_terminated()
    ts.request(10)
    ts.assert_values(0, 0, 0).assert_error(OSError)
    assert probe.subscribes == 3


def test_retry_many_immediate_failures_do_not_grow_the_stack() -> None:
    ts = TestSubscriber[int](initial_request=1)
    Flux.error(OSError("x")).retry(5000).subscribe(ts)
    ts.assert_error(OSError)


def test_retry_when_selects_and_raising_predicate() -> None:
    ts = TestSubscriber[int](initial_request=1)
    Flux.error(KeyError("k")).retry(when=OSError).subscribe(ts)
    ts.assert_error(KeyError)
    bad = TestSubscriber[int](initial_request=1)
    Flux.error(KeyError("k")).retry(when=lambda e: 1 // 0).subscribe(bad)
    bad.assert_error(ZeroDivisionError)
    with pytest.raises(ValueError, match=">= 0"):
        Flux.range(0, 1).retry(-1)


def test_retry_cancel_cancels_current_attempt() -> None:
    probe = Probe(1, OSError("x"))
    ts = TestSubscriber[int](initial_request=2)
    Flux.from_publisher(probe).retry().subscribe(ts)
    ts.assert_values(0, 0)
    ts.cancel()
    assert probe.cancels == 1
    assert probe.subscribes == 2
