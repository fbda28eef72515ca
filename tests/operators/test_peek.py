"""do_on_*: side effects per signal."""

from __future__ import annotations

from reactive_aio import Flux, Subscription
from reactive_aio.testing import TestSubscriber

from ._transform_support import Probe


def test_do_on_signals_see_every_signal_in_order() -> None:
    seen: list[object] = []
    ts = TestSubscriber[int]()
    (
        Flux.range(0, 2)
        .do_on_subscribe(lambda s: seen.append("subscribe"))
        .do_on_request(lambda n: seen.append(("request", n)))
        .do_on_next(lambda x: seen.append(("next", x)))
        .do_on_complete(lambda: seen.append("complete"))
        .subscribe(ts)
    )
    assert seen == ["subscribe"]
    ts.request(1)
    assert seen == ["subscribe", ("request", 1), ("next", 0)]
    ts.request(5)
    ts.assert_values(0, 1).assert_complete()
    assert seen[-2:] == [("next", 1), "complete"]


def test_do_on_error_and_cancel() -> None:
    errors: list[BaseException] = []
    cancels: list[bool] = []
    ts = TestSubscriber[int](initial_request=5)
    Flux.from_publisher(Probe(1, OSError("x"))).do_on_error(errors.append).subscribe(ts)
    ts.assert_values(0).assert_error(OSError)
    assert len(errors) == 1
    probe = Probe(5)
    ts2 = TestSubscriber[int](initial_request=1)
    Flux.from_publisher(probe).do_on_cancel(lambda: cancels.append(True)).subscribe(ts2)
    ts2.cancel()
    assert cancels == [True]
    assert probe.cancels == 1


def test_raising_do_on_next_cancels_upstream_then_errors() -> None:
    probe = Probe(5)
    ts = TestSubscriber[int](initial_request=5)
    Flux.from_publisher(probe).do_on_next(lambda x: 1 // (x - 1)).subscribe(ts)
    ts.assert_values(0).assert_error(ZeroDivisionError)
    assert probe.cancels == 1


def test_raising_do_on_error_and_complete_are_signalled() -> None:
    def boom(*_: object) -> None:
        raise KeyError("hook")

    ts = TestSubscriber[int](initial_request=5)
    Flux.error(OSError("x")).do_on_error(boom).subscribe(ts)
    ts.assert_error(KeyError)
    assert isinstance(ts.errors[0].__context__, OSError)
    ts2 = TestSubscriber[int](initial_request=5)
    Flux.range(0, 1).do_on_complete(boom).subscribe(ts2)
    ts2.assert_values(0).assert_error(KeyError)


def test_raising_do_on_subscribe_and_request() -> None:
    def bad_subscribe(s: Subscription) -> None:
        raise KeyError("sub")

    probe = Probe(5)
    ts = TestSubscriber[int](initial_request=5)
    Flux.from_publisher(probe).do_on_subscribe(bad_subscribe).subscribe(ts)
    ts.assert_no_values().assert_error(KeyError)
    ts2 = TestSubscriber[int]()
    Flux.range(0, 5).do_on_request(lambda n: 1 // 0).subscribe(ts2)
    ts2.request(1)
    ts2.assert_no_values().assert_error(ZeroDivisionError)
