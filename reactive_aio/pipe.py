"""Curried operators: ``flux | pipe.map(f)`` and ``flux.pipe(pipe.map(f), pipe.filter(p))``.

Each function takes the operator's arguments and returns a ``Flux -> Flux`` function that calls
the `Flux` method of the same name, so the two spellings always behave the same. One function
per operator, in alphabetical order.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterable, Awaitable, Callable, Hashable, Iterable
from typing import Any, TypeVar

from ._core import Publisher, Subscription
from ._flux import Flux
from ._operators._do_finally import EndSignal
from ._operators._element_at import NO_DEFAULT
from ._operators._flat_map import DEFAULT_CONCURRENCY, DEFAULT_PREFETCH as INNER_PREFETCH
from ._operators._on_error_return import ErrorSelector
from ._operators._scan import NO_SEED
from ._sources._overflow import OverflowThen

__all__ = (
    "buffer",
    "concat_map",
    "concat_with",
    "default_if_empty",
    "distinct",
    "distinct_until_changed",
    "do_finally",
    "do_on_cancel",
    "do_on_complete",
    "do_on_error",
    "do_on_next",
    "do_on_request",
    "do_on_subscribe",
    "element_at",
    "filter",
    "flat_map",
    "flat_map_iterable",
    "flat_map_sequential",
    "index",
    "limit_rate",
    "log",
    "map",
    "map_async",
    "map_skip_errors",
    "merge_with",
    "of_type",
    "on_backpressure_buffer",
    "on_backpressure_drop",
    "on_backpressure_error",
    "on_backpressure_latest",
    "on_error_map",
    "on_error_resume",
    "on_error_return",
    "pairwise",
    "publish_on",
    "retry",
    "scan",
    "skip",
    "skip_last",
    "skip_until",
    "skip_while",
    "spark_map",
    "start_with",
    "take",
    "take_last",
    "take_until",
    "take_while",
    "window",
)

T = TypeVar("T")
R = TypeVar("R")
A = TypeVar("A")

Operator = Callable[[Flux[T]], Flux[R]]


def buffer(count: int, skip: int | None = None) -> Operator[T, list[T]]:
    """`Flux.buffer`."""
    return lambda flux: flux.buffer(count, skip)


def concat_map(
    fn: Callable[[T], Publisher[R] | AsyncIterable[R] | Awaitable[R]],
    *,
    prefetch: int = INNER_PREFETCH,
) -> Operator[T, R]:
    """`Flux.concat_map`."""
    return lambda flux: flux.concat_map(fn, prefetch=prefetch)


def concat_with(other: Publisher[R], *, prefetch: int = INNER_PREFETCH) -> Operator[T, T | R]:
    """`Flux.concat_with`."""
    return lambda flux: flux.concat_with(other, prefetch=prefetch)


def default_if_empty(value: T) -> Operator[T, T]:
    """`Flux.default_if_empty`."""
    return lambda flux: flux.default_if_empty(value)


def distinct(key: Callable[[T], Hashable] | None = None) -> Operator[T, T]:
    """`Flux.distinct`."""
    return lambda flux: flux.distinct(key)


def distinct_until_changed(key: Callable[[T], object] | None = None) -> Operator[T, T]:
    """`Flux.distinct_until_changed`."""
    return lambda flux: flux.distinct_until_changed(key)


def do_finally(fn: Callable[[EndSignal], object]) -> Operator[T, T]:
    """`Flux.do_finally`."""
    return lambda flux: flux.do_finally(fn)


def do_on_cancel(fn: Callable[[], object]) -> Operator[T, T]:
    """`Flux.do_on_cancel`."""
    return lambda flux: flux.do_on_cancel(fn)


def do_on_complete(fn: Callable[[], object]) -> Operator[T, T]:
    """`Flux.do_on_complete`."""
    return lambda flux: flux.do_on_complete(fn)


def do_on_error(fn: Callable[[BaseException], object]) -> Operator[T, T]:
    """`Flux.do_on_error`."""
    return lambda flux: flux.do_on_error(fn)


def do_on_next(fn: Callable[[T], object]) -> Operator[T, T]:
    """`Flux.do_on_next`."""
    return lambda flux: flux.do_on_next(fn)


def do_on_request(fn: Callable[[int], object]) -> Operator[T, T]:
    """`Flux.do_on_request`."""
    return lambda flux: flux.do_on_request(fn)


def do_on_subscribe(fn: Callable[[Subscription], object]) -> Operator[T, T]:
    """`Flux.do_on_subscribe`."""
    return lambda flux: flux.do_on_subscribe(fn)


def element_at(index: int, default: T = NO_DEFAULT) -> Operator[T, T]:
    """`Flux.element_at`."""
    return lambda flux: flux.element_at(index, default)


def filter(predicate: Callable[[T], object]) -> Operator[T, T]:
    """`Flux.filter`."""
    return lambda flux: flux.filter(predicate)


def flat_map(
    fn: Callable[[T], Publisher[R] | AsyncIterable[R] | Awaitable[R]],
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    prefetch: int = INNER_PREFETCH,
) -> Operator[T, R]:
    """`Flux.flat_map`."""
    return lambda flux: flux.flat_map(fn, concurrency=concurrency, prefetch=prefetch)


def flat_map_iterable(fn: Callable[[T], Iterable[R]]) -> Operator[T, R]:
    """`Flux.flat_map_iterable`."""
    return lambda flux: flux.flat_map_iterable(fn)


def flat_map_sequential(
    fn: Callable[[T], Publisher[R] | AsyncIterable[R] | Awaitable[R]],
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    prefetch: int = INNER_PREFETCH,
) -> Operator[T, R]:
    """`Flux.flat_map_sequential`."""
    return lambda flux: flux.flat_map_sequential(fn, concurrency=concurrency, prefetch=prefetch)


def index() -> Operator[T, tuple[int, T]]:
    """`Flux.index`."""
    return lambda flux: flux.index()


def limit_rate(high: int, low: int | None = None) -> Operator[T, T]:
    """`Flux.limit_rate`."""
    return lambda flux: flux.limit_rate(high, low)


def log(name: str, *, level: int = logging.INFO) -> Operator[T, T]:
    """`Flux.log`."""
    return lambda flux: flux.log(name, level=level)


def map(fn: Callable[[T], R]) -> Operator[T, R]:
    """`Flux.map`."""
    return lambda flux: flux.map(fn)


def map_async(
    fn: Callable[[T], Awaitable[R]], *, concurrency: int = 1, ordered: bool = True
) -> Operator[T, R]:
    """`Flux.map_async`."""
    return lambda flux: flux.map_async(fn, concurrency=concurrency, ordered=ordered)


def map_skip_errors(
    fn: Callable[[T], R], *, on_dropped: Callable[[T, Exception], object] | None = None
) -> Operator[T, R]:
    """`Flux.map_skip_errors`."""
    return lambda flux: flux.map_skip_errors(fn, on_dropped=on_dropped)


def merge_with(other: Publisher[R], *, prefetch: int = INNER_PREFETCH) -> Operator[T, T | R]:
    """`Flux.merge_with`."""
    return lambda flux: flux.merge_with(other, prefetch=prefetch)


def of_type(cls: type[R] | tuple[type[R], ...]) -> Operator[Any, R]:
    """`Flux.of_type`."""
    return lambda flux: flux.of_type(cls)


def on_backpressure_buffer(
    max_size: int,
    *,
    overflow: OverflowThen = "error",
    on_overflow: Callable[[T], object] | None = None,
) -> Operator[T, T]:
    """`Flux.on_backpressure_buffer`."""
    return lambda flux: flux.on_backpressure_buffer(
        max_size, overflow=overflow, on_overflow=on_overflow
    )


def on_backpressure_drop(on_dropped: Callable[[T], object] | None = None) -> Operator[T, T]:
    """`Flux.on_backpressure_drop`."""
    return lambda flux: flux.on_backpressure_drop(on_dropped)


def on_backpressure_error() -> Operator[T, T]:
    """`Flux.on_backpressure_error`."""
    return lambda flux: flux.on_backpressure_error()


def on_backpressure_latest() -> Operator[T, T]:
    """`Flux.on_backpressure_latest`."""
    return lambda flux: flux.on_backpressure_latest()


def on_error_map(fn: Callable[[BaseException], BaseException]) -> Operator[T, T]:
    """`Flux.on_error_map`."""
    return lambda flux: flux.on_error_map(fn)


def on_error_resume(fn: Callable[[BaseException], Publisher[T]]) -> Operator[T, T]:
    """`Flux.on_error_resume`."""
    return lambda flux: flux.on_error_resume(fn)


def on_error_return(value: T, *, when: ErrorSelector | None = None) -> Operator[T, T]:
    """`Flux.on_error_return`."""
    return lambda flux: flux.on_error_return(value, when=when)


def pairwise() -> Operator[T, tuple[T, T]]:
    """`Flux.pairwise`."""
    return lambda flux: flux.pairwise()


def publish_on(*, buffer_size: int = 256) -> Operator[T, T]:
    """`Flux.publish_on`."""
    return lambda flux: flux.publish_on(buffer_size=buffer_size)


def retry(max_attempts: int | None = None, *, when: ErrorSelector | None = None) -> Operator[T, T]:
    """`Flux.retry`."""
    return lambda flux: flux.retry(max_attempts, when=when)


def scan(fn: Callable[[A, T], A], seed: A = NO_SEED) -> Operator[T, A]:
    """`Flux.scan` (without *seed*, ``A`` is the item type)."""
    return lambda flux: flux.scan(fn, seed)


def skip(count: int) -> Operator[T, T]:
    """`Flux.skip`."""
    return lambda flux: flux.skip(count)


def skip_last(count: int) -> Operator[T, T]:
    """`Flux.skip_last`."""
    return lambda flux: flux.skip_last(count)


def skip_until(other: Publisher[object]) -> Operator[T, T]:
    """`Flux.skip_until`."""
    return lambda flux: flux.skip_until(other)


def skip_while(predicate: Callable[[T], object]) -> Operator[T, T]:
    """`Flux.skip_while`."""
    return lambda flux: flux.skip_while(predicate)


def spark_map(
    fn: Callable[[Any], Any],
    *,
    spark: Any,
    batch_rows: int = 100_000,
    max_latency: float = 1.0,
    schema: Any = None,
) -> Operator[Any, Any]:
    """`Flux.spark_map` (pyspark is imported only when the operator is applied)."""
    return lambda flux: flux.spark_map(
        fn, spark=spark, batch_rows=batch_rows, max_latency=max_latency, schema=schema
    )


def start_with(*items: T) -> Operator[T, T]:
    """`Flux.start_with`."""
    return lambda flux: flux.start_with(*items)


def take(count: int) -> Operator[T, T]:
    """`Flux.take`."""
    return lambda flux: flux.take(count)


def take_last(count: int) -> Operator[T, T]:
    """`Flux.take_last`."""
    return lambda flux: flux.take_last(count)


def take_until(other: Publisher[object]) -> Operator[T, T]:
    """`Flux.take_until`."""
    return lambda flux: flux.take_until(other)


def take_while(predicate: Callable[[T], object]) -> Operator[T, T]:
    """`Flux.take_while`."""
    return lambda flux: flux.take_while(predicate)


def window(count: int) -> Operator[T, Flux[T]]:
    """`Flux.window`."""
    return lambda flux: flux.window(count)
