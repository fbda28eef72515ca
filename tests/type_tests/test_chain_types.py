"""Static checks (mypy) that chains keep their element types; importable by pytest too."""

from __future__ import annotations

from typing import Never, assert_type

from reactive_aio import ConnectableFlux, Flux, Notification, Retry, pipe


def test_transform_chain_types() -> None:
    ints = Flux.range(0, 3)
    assert_type(ints.scan(lambda a, x: a + x, 0).pairwise(), Flux[tuple[int, int]])
    assert_type(ints.scan(lambda a, x: a + x), Flux[int])
    assert_type(ints.scan(lambda a, x: a + str(x), ""), Flux[str])
    assert_type(ints.index(), Flux[tuple[int, int]])
    assert_type(ints.take_while(lambda x: x < 2).skip(1).skip_last(1), Flux[int])
    assert_type(ints.skip_while(bool).distinct().distinct_until_changed(), Flux[int])
    assert_type(ints.element_at(1), Flux[int])
    assert_type(ints.element_at(1, 5), Flux[int])
    assert_type(ints.element_at(1, "none"), Flux[int | str])
    assert_type(ints.default_if_empty(0).start_with(-1), Flux[int])
    assert_type(ints.take_last(2).take_until(Flux.never()).skip_until(Flux.just("go")), Flux[int])
    assert_type(ints.buffer(2), Flux[list[int]])
    assert_type(ints.buffer_until(bool, cut_before=True), Flux[list[int]])
    assert_type(ints.buffer_while(bool), Flux[list[int]])
    assert_type(ints.publish_on().batch(64), Flux[list[int]])
    assert_type(ints.window(2), Flux[Flux[int]])
    assert_type(ints.window(3, 1), Flux[Flux[int]])
    assert_type(ints.retry_when(Retry.backoff(3, 0.1, max_backoff=1.0)), Flux[int])
    assert_type(ints.retry_when(lambda errors: errors.take(2)), Flux[int])
    assert_type(ints.repeat_when(lambda rounds: rounds.take_while(lambda r: r < 3)), Flux[int])
    assert_type(ints.switch_on_first(lambda first, rest: rest.map(str)), Flux[str])
    assert_type(ints.window(Flux.interval(1.0)), Flux[Flux[int]])
    assert_type(ints.buffer(Flux.interval(1.0)), Flux[list[int]])
    assert_type(ints.sample(Flux.just("tick")), Flux[int])
    assert_type(ints.sample(0.5), Flux[int])
    assert_type(ints.debounce(lambda x: Flux.timer(x / 10)), Flux[int])
    assert_type(ints.debounce(0.5), Flux[int])
    assert_type(ints.window_until(bool, cut_before=True), Flux[Flux[int]])
    assert_type(ints.window_while(bool), Flux[Flux[int]])
    assert_type(ints.window_until_changed(lambda x: x % 2), Flux[Flux[int]])
    assert_type(ints.group_by(lambda x: str(x % 2)), Flux[tuple[str, Flux[int]]])
    assert_type(ints.buffer(2, 1).flat_map_iterable(lambda xs: xs), Flux[int])
    assert_type(ints.flat_map_iterable(lambda x: str(x)), Flux[str])
    assert_type(ints.map_skip_errors(lambda x: 1 / x, on_dropped=print), Flux[float])
    mixed: Flux[object] = Flux.just("a", 1)
    assert_type(mixed.of_type(str), Flux[str])
    assert_type(ints.take_while(lambda x: x < 2, inclusive=True).repeat(2), Flux[int])
    assert_type(ints.distinct_until_changed(comparer=lambda a, b: a == b), Flux[int])
    assert_type(ints.distinct_until_changed(str, comparer=lambda a, b: a == b), Flux[int])
    assert_type(ints.on_error_resume(lambda e: Flux.just("x"), when=OSError), Flux[int | str])
    assert_type(ints.elapsed(), Flux[tuple[float, int]])
    assert_type(ints.timestamp(), Flux[tuple[float, int]])
    assert_type(ints.materialize(), Flux[Notification[int]])
    assert_type(ints.materialize().dematerialize(), Flux[int])
    assert_type(Flux.just(Flux.just("a")).switch_on_next(), Flux[str])
    assert_type(ints.filter_when(lambda x: Flux.just(True)), Flux[int])
    assert_type(ints.delay_until(lambda x: Flux.empty()), Flux[int])
    assert_type(ints.expand(lambda x: Flux.just(x + 1)), Flux[int])
    assert_type(ints.expand_deep(lambda x: Flux.just(str(x))), Flux[int | str])
    assert_type(ints.ignore_elements(), Flux[Never])
    assert_type(ints.then(), Flux[Never])
    assert_type(ints.then(Flux.just("done")), Flux[str])
    assert_type(ints | pipe.then(Flux.just("done")), Flux[str])


async def test_aggregate_types() -> None:
    ints = Flux.range(0, 3)
    assert_type(await ints.count(), int)
    assert_type(await ints.all(lambda x: x > 0), bool)
    assert_type(await ints.any(lambda x: x > 0), bool)
    assert_type(await ints.contains(2), bool)
    assert_type(await ints.is_empty(), bool)
    assert_type(await ints.to_dict(str), dict[str, int])
    assert_type(await ints.to_dict(str, float), dict[str, float])
    assert_type(await ints.to_multidict(str), dict[str, list[int]])
    assert_type(await ints.to_multidict(str, float), dict[str, list[float]])
    assert_type(await ints.to_sorted_list(key=lambda x: -x, reverse=True), list[int])


def test_side_effect_and_error_chain_types() -> None:
    ints = Flux.range(0, 3)
    chained = (
        ints.do_on_next(print)
        .do_on_error(print)
        .do_on_complete(lambda: None)
        .do_on_subscribe(print)
        .do_on_request(print)
        .do_on_cancel(lambda: None)
        .do_finally(print)
        .log("x")
    )
    assert_type(chained, Flux[int])
    assert_type(ints.on_error_return(-1, when=OSError).retry(3), Flux[int])
    assert_type(ints.on_error_resume(lambda e: Flux.just(1)), Flux[int])
    assert_type(ints.on_error_map(lambda e: KeyError(str(e))), Flux[int])
    assert_type(Flux.error(OSError()).on_error_return("x"), Flux[str])


async def _to_str(x: int) -> str:
    return str(x)


def test_async_chain_types() -> None:
    assert_type(Flux.range(0, 3).map_async(_to_str, concurrency=2), Flux[str])
    assert_type(Flux.range(0, 3) | pipe.map_async(_to_str), Flux[str])


def test_using_types() -> None:
    assert_type(Flux.using(lambda: 3, lambda n: Flux.range(0, n), lambda n: None), Flux[int])


def test_pipe_types() -> None:
    # The pipe forms are derived from the methods: their type variables and overloads survive.
    ints = Flux.range(0, 3)
    assert_type(pipe.map(str)(ints), Flux[str])
    assert_type(ints | pipe.map(str), Flux[str])
    assert_type(ints | pipe.pairwise(), Flux[tuple[int, int]])
    assert_type(ints | pipe.scan(lambda a, x: a + x), Flux[int])
    assert_type(ints | pipe.scan(lambda a, x: a + str(x), ""), Flux[str])
    assert_type(ints | pipe.element_at(1), Flux[int])
    assert_type(ints | pipe.element_at(1, "none"), Flux[int | str])
    assert_type(ints | pipe.start_with("a"), Flux[int | str])
    assert_type(ints | pipe.group_by(str), Flux[tuple[str, Flux[int]]])
    assert_type(ints | pipe.zip_with(Flux.just("a")), Flux[tuple[int, str]])
    assert_type(ints | pipe.publish(), ConnectableFlux[int, Flux[int]])
    mixed: Flux[object] = Flux.just("a", 1)
    assert_type(mixed | pipe.of_type(str), Flux[str])
