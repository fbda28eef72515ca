"""scan: running folds, with and without a seed."""

from __future__ import annotations

from reactive_aio import Flux, NullSignalError
from reactive_aio.testing import TestSubscriber

from ._transform_support import Probe


def test_scan_with_seed_emits_each_fold_on_demand() -> None:
    ts = TestSubscriber[int]()
    Flux.range(1, 4).scan(lambda a, x: a + x, 10).subscribe(ts)
    ts.assert_no_values()
    ts.request(1)
    ts.assert_values(11).assert_not_terminated()
    ts.request(10)
    ts.assert_values(11, 13, 16, 20).assert_complete()


def test_scan_without_seed_starts_with_first_item() -> None:
    ts = TestSubscriber[int](initial_request=10)
    Flux.range(1, 4).scan(lambda a, x: a * x).subscribe(ts)
    ts.assert_values(1, 2, 6, 24).assert_complete()


def test_scan_cancel_cancels_upstream() -> None:
    probe = Probe(10)
    ts = TestSubscriber[int](initial_request=2)
    Flux.from_publisher(probe).scan(lambda a, x: a + x, 0).subscribe(ts)
    ts.cancel()
    assert probe.cancels == 1
    ts.assert_values(0, 1).assert_not_terminated()


def test_scan_raising_cancels_upstream_then_errors() -> None:
    probe = Probe(10)
    ts = TestSubscriber[int](initial_request=10)
    Flux.from_publisher(probe).scan(lambda a, x: a + 1 // (x - 2), 0).subscribe(ts)
    ts.assert_values(-1, -2).assert_error(ZeroDivisionError)
    assert probe.cancels == 1


def test_scan_returning_none_is_an_error() -> None:
    ts = TestSubscriber[int](initial_request=10)
    Flux.range(0, 3).scan(lambda a, x: None, 0).subscribe(ts)  # type: ignore[arg-type, return-value]
    ts.assert_error(NullSignalError, match="scan")


def test_scan_passes_upstream_error() -> None:
    ts = TestSubscriber[int](initial_request=10)
    Flux.from_publisher(Probe(2, OSError("down"))).scan(lambda a, x: a + x, 0).subscribe(ts)
    ts.assert_values(0, 1).assert_error(OSError, match="down")


async def test_scan_with_seed_does_not_emit_the_seed() -> None:
    """Deliberate choice (unlike Reactor): one emission per item; ``start_with`` adds the seed."""
    assert await Flux.range(1, 3).scan(lambda a, x: a + x, 0).to_list() == [1, 3, 6]
    assert await Flux.empty().scan(lambda a, x: a + x, 0).to_list() == []
    reactor_form = Flux.range(1, 3).scan(lambda a, x: a + x, 0).start_with(0)
    assert await reactor_form.to_list() == [0, 1, 3, 6]
