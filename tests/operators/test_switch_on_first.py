"""switch_on_first: the first signal picks the stream. ``test_reactor_*`` cases are ported
from reactor-core's ``FluxSwitchOnFirstTest``."""

from __future__ import annotations

from reactive_aio import Flux, Notification, ProtocolViolationError, Publisher
from reactive_aio.testing import TestPublisher, TestSubscriber

from ._transform_support import Probe


async def test_filter_by_the_first_item() -> None:
    # the first item is the minimum of what follows (as the operator's documentation shows)
    def at_least_first(first: Notification[int], source: Flux[int]) -> Flux[int]:
        minimum = first.value
        return source if minimum is None else source.filter(lambda n: n >= minimum)

    flux = Flux.just(3, 5, 1, 9, 6, 2, 0, 4).switch_on_first(at_least_first)
    assert await flux.to_list() == [3, 5, 9, 6, 4]


async def test_reactor_should_not_subscribe_twice() -> None:
    errors: list[BaseException] = []

    def twice(first: Notification[int], source: Flux[int]) -> Flux[int]:
        source.subscribe(on_next=lambda _: None, on_error=errors.append)
        source.subscribe(on_next=lambda _: None, on_error=errors.append)
        return Flux.empty()

    ts = TestSubscriber[int](initial_request=10)
    Flux.just(1).switch_on_first(twice).subscribe(ts)
    ts.assert_no_values().assert_complete()
    assert len(errors) == 1
    assert isinstance(errors[0], ProtocolViolationError)


async def test_reactor_should_error_on_overlap_of_double_flat_map() -> None:
    # an error inside the stream fn returned passes through, nothing is dropped
    def checked(first: Notification[int], source: Flux[int]) -> Flux[int]:
        minimum = first.value
        assert minimum is not None
        return source.flat_map(lambda n: Flux.just(minimum)).flat_map(
            lambda _: Flux.error(ValueError("this fails!"))
        )

    ts = TestSubscriber[int](initial_request=10)
    Flux.just(1, 2, 3).switch_on_first(checked).subscribe(ts)
    ts.assert_error(ValueError, match="this fails!")


async def test_an_empty_or_failing_source_gives_its_terminal_signal() -> None:
    kinds: list[str] = []

    def note(first: Notification[int], source: Flux[int]) -> Publisher[int]:
        kinds.append(first.kind)
        return source

    assert await Flux.empty().switch_on_first(note).to_list() == []
    ts = TestSubscriber[int](initial_request=1)
    Flux.error(OSError("x")).switch_on_first(note).subscribe(ts)
    ts.assert_error(OSError)
    assert kinds == ["complete", "error"]


def test_the_source_is_asked_one_item_then_prefetches() -> None:
    probe = Probe(100)
    ts = TestSubscriber[int](initial_request=2)
    Flux.from_publisher(probe).switch_on_first(lambda first, source: source).subscribe(ts)
    ts.assert_values(0, 1)
    assert probe.requests[:2] == [1, 32]


def test_a_raising_fn_cancels_the_source() -> None:
    source = TestPublisher[int].create()
    ts = TestSubscriber[int](initial_request=1)

    def broken(first: Notification[int], rest: Flux[int]) -> Flux[int]:
        raise KeyError("no")

    Flux.from_publisher(source).switch_on_first(broken).subscribe(ts)
    source.next(1)
    ts.assert_error(KeyError)
    assert source.cancelled


def test_an_unused_source_is_cancelled_when_the_stream_ends() -> None:
    source = TestPublisher[int].create()
    ts = TestSubscriber[str](initial_request=5)
    Flux.from_publisher(source).switch_on_first(lambda first, rest: Flux.just("x")).subscribe(ts)
    source.next(1)
    ts.assert_values("x").assert_complete()
    assert source.cancelled


def test_cancelling_before_the_first_item_cancels_the_source() -> None:
    source = TestPublisher[int].create()
    ts = TestSubscriber[int](initial_request=5)
    Flux.from_publisher(source).switch_on_first(lambda first, rest: rest).subscribe(ts)
    ts.cancel()
    assert source.cancelled
