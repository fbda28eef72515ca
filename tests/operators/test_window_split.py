"""window_until, window_while and window_until_changed: windows cut by a predicate or a key.
``test_reactor_*`` cases are ported from reactor-core's ``FluxWindowPredicateTest``."""

from __future__ import annotations

from reactive_aio import Flux, Notification
from reactive_aio.testing import TestPublisher, TestSubscriber

from ._transform_support import Probe

_COLOURS = ("red", "green", "#", "orange", "blue", "#", "black", "white")


def _signal(notification: Notification[object]) -> str:
    return str(notification.value) if notification.kind == "next" else notification.kind


def _marked(windows: Flux[Flux[str]]) -> Flux[str]:
    """The items of every window, each window's end marked with ``|``."""
    return windows.concat_map(lambda w: w.materialize().map(lambda n: n.value or "|"))


async def test_reactor_api_until() -> None:
    out = await _marked(Flux.just(*_COLOURS).window_until(lambda c: c == "#")).to_list()
    assert out == ["red", "green", "#", "|", "orange", "blue", "#", "|", "black", "white", "|"]


async def test_reactor_api_until_cut_before() -> None:
    windows = Flux.just(*_COLOURS).window_until(lambda c: c == "#", cut_before=True)
    out = await _marked(windows).to_list()
    assert out == ["red", "green", "|", "#", "orange", "blue", "|", "#", "black", "white", "|"]


async def test_reactor_api_while() -> None:
    out = await _marked(Flux.just(*_COLOURS).window_while(lambda c: c != "#")).to_list()
    assert out == ["red", "green", "|", "orange", "blue", "|", "black", "white", "|"]


async def test_reactor_until_changed_some_repetition() -> None:
    windows = Flux.just(1, 1, 2, 2, 3, 3, 1).window_until_changed()
    assert await windows.concat_map(lambda w: w.buffer(10)).to_list() == [
        [1, 1],
        [2, 2],
        [3, 3],
        [1],
    ]


async def test_until_changed_by_key() -> None:
    windows = Flux.just("a", "ab", "b", "bc", "a").window_until_changed(lambda s: s[0])
    lists = await windows.concat_map(lambda w: w.buffer(10)).to_list()
    assert lists == [["a", "ab"], ["b", "bc"], ["a"]]


async def test_reactor_on_completion_before_last_boundary_window_emitted() -> None:
    source = Flux.just(1, 2)
    for windows in (
        source.window_until(lambda i: i >= 3),
        source.window_until(lambda i: i >= 3, cut_before=True),
        source.window_while(lambda i: i < 3),
    ):
        assert await windows.concat_map(lambda w: w.buffer(10)).to_list() == [[1, 2]]


async def test_reactor_main_error_until_is_propagated_to_both_window_and_main() -> None:
    source = TestPublisher[int].create()
    ts = TestSubscriber[str](initial_request=100)
    windows = Flux.from_publisher(source).window_until(lambda i: i % 3 == 0)
    windows.flat_map(lambda w: w.materialize().map(_signal)).subscribe(ts)
    source.next(1, 2, 3)
    ts.assert_values("1", "2", "3", "complete")
    source.next(4)
    source.error(RuntimeError("forced failure"))
    ts.assert_values("1", "2", "3", "complete", "4", "error").assert_error(RuntimeError)


async def test_reactor_predicate_error_until() -> None:
    def cut(i: int) -> bool:
        if i == 5:
            raise ValueError("predicate failure")
        return i % 3 == 0

    probe = Probe(10)
    ts = TestSubscriber[str](initial_request=100)
    windows = Flux.from_publisher(probe).window_until(cut)
    windows.flat_map(lambda w: w.materialize().map(_signal)).subscribe(ts)
    ts.assert_values("0", "complete", "1", "2", "3", "complete", "4", "error")
    ts.assert_error(ValueError, match="predicate failure")
    assert probe.cancels == 1


def test_upstream_is_asked_one_item_at_a_time_when_it_has_a_taker() -> None:
    probe = Probe(10)
    outer = TestSubscriber[Flux[int]]()
    Flux.from_publisher(probe).window_until(lambda i: i == 2).subscribe(outer)
    assert probe.requests == []  # nobody asked for a window
    outer.request(1)
    assert probe.requests == [1]  # the item that opens it
    inner = TestSubscriber[int]()
    outer.values[0].subscribe(inner)
    assert probe.requests == [1]  # the window holds an item nobody took yet
    inner.request(2)
    inner.assert_values(0, 1)
    assert probe.requests == [1, 1, 1]
    inner.request(1)
    inner.assert_values(0, 1, 2).assert_complete()
    assert probe.requests == [1, 1, 1]  # the next item opens a window nobody asked for
    outer.request(1)
    assert probe.requests == [1, 1, 1, 1]
    outer.assert_value_count(2)


def test_a_window_opened_without_outer_demand_is_held() -> None:
    source = TestPublisher[int].create()
    outer = TestSubscriber[Flux[int]](initial_request=1)
    Flux.from_publisher(source).window_until(lambda i: i == 0, cut_before=True).subscribe(outer)
    source.next(1)
    inner = TestSubscriber[int](initial_request=10)
    outer.values[0].subscribe(inner)
    source.next(2, 0)  # 0 closes the first window and opens the next: nobody asked yet
    inner.assert_values(1, 2).assert_complete()
    outer.assert_value_count(1)
    assert source.demand == 0  # nothing more until the held window is taken
    outer.request(1)
    outer.assert_value_count(2)
    second = TestSubscriber[int](initial_request=10)
    outer.values[1].subscribe(second)
    second.assert_values(0)
    assert source.demand == 1
    source.complete()
    second.assert_complete()
    outer.assert_complete()


def test_a_cancelled_window_drops_its_items_up_to_the_next_cut() -> None:
    probe = Probe(7)
    outer = TestSubscriber[Flux[int]](initial_request=5)
    Flux.from_publisher(probe).window_while(lambda i: i != 3).subscribe(outer)
    first = TestSubscriber[int](initial_request=1)
    outer.values[0].subscribe(first)
    first.cancel()  # 1 and 2 are dropped; 3 cuts, 4 opens the next window
    outer.assert_value_count(2).assert_not_terminated()
    rest = TestSubscriber[int](initial_request=5)
    outer.values[1].subscribe(rest)
    rest.assert_values(4, 5, 6).assert_complete()
    outer.assert_complete()


def test_outer_cancel_keeps_the_open_window_until_it_is_done() -> None:
    probe = Probe(10)
    outer = TestSubscriber[Flux[int]](initial_request=1)
    Flux.from_publisher(probe).window_until_changed(lambda i: i // 4).subscribe(outer)
    inner = TestSubscriber[int](initial_request=1)
    outer.values[0].subscribe(inner)
    outer.cancel()
    assert probe.cancels == 0
    inner.request(10)
    inner.assert_values(0, 1, 2, 3).assert_complete()
    assert probe.cancels == 1  # item 4 would open a window: upstream goes
    outer.assert_value_count(1)


def test_outer_cancel_with_a_held_window_cancels_upstream() -> None:
    source = TestPublisher[int].create()
    outer = TestSubscriber[Flux[int]](initial_request=1)
    Flux.from_publisher(source).window_until_changed().subscribe(outer)
    source.next(1)
    inner = TestSubscriber[int](initial_request=10)
    outer.values[0].subscribe(inner)
    source.next(2)  # closes the first window, opens one nobody asked for
    inner.assert_values(1).assert_complete()
    outer.cancel()
    assert source.cancelled
