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
from ._operators._group_by import DEFAULT_MAX_GROUPS, GROUP_PREFETCH
from ._operators._on_error_return import ErrorSelector
from ._operators._publish import ConnectableFlux
from ._operators._scan import NO_SEED
from ._sources._overflow import OverflowThen

__all__ = (
    "buffer",
    "buffer_timeout",
    "concat_map",
    "concat_with",
    "debounce",
    "default_if_empty",
    "delay",
    "delay_elements",
    "delay_subscription",
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
    "group_by",
    "index",
    "limit_rate",
    "log",
    "map",
    "map_async",
    "map_in_thread",
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
    "publish",
    "publish_on",
    "replay",
    "retry",
    "retry_backoff",
    "sample",
    "scan",
    "share",
    "skip",
    "skip_for",
    "skip_last",
    "skip_until",
    "skip_while",
    "start_with",
    "switch_map",
    "take",
    "take_for",
    "take_last",
    "take_until",
    "take_while",
    "throttle_first",
    "throttle_last",
    "timeout",
    "window",
    "window_timeout",
    "with_latest_from",
    "zip_with",
)

T = TypeVar("T")
R = TypeVar("R")
A = TypeVar("A")
K = TypeVar("K", bound=Hashable)

Operator = Callable[[Flux[T]], Flux[R]]


def buffer(count: int, skip: int | None = None) -> Operator[T, list[T]]:
    """`Flux.buffer`."""
    return lambda flux: flux.buffer(count, skip)


def buffer_timeout(max_size: int, max_time: float) -> Operator[T, list[T]]:
    """`Flux.buffer_timeout`."""
    return lambda flux: flux.buffer_timeout(max_size, max_time)


def concat_map(
    fn: Callable[[T], Publisher[R] | AsyncIterable[R] | Awaitable[R]],
    *,
    prefetch: int = INNER_PREFETCH,
    delay_errors: bool = False,
) -> Operator[T, R]:
    """`Flux.concat_map`."""
    return lambda flux: flux.concat_map(fn, prefetch=prefetch, delay_errors=delay_errors)


def concat_with(other: Publisher[R], *, prefetch: int = INNER_PREFETCH) -> Operator[T, T | R]:
    """`Flux.concat_with`."""
    return lambda flux: flux.concat_with(other, prefetch=prefetch)


def debounce(timeout: float) -> Operator[T, T]:
    """`Flux.debounce`."""
    return lambda flux: flux.debounce(timeout)


def default_if_empty(value: T) -> Operator[T, T]:
    """`Flux.default_if_empty`."""
    return lambda flux: flux.default_if_empty(value)


def delay(delay: float) -> Operator[T, T]:
    """`Flux.delay`."""
    return lambda flux: flux.delay(delay)


def delay_elements(delay: float) -> Operator[T, T]:
    """`Flux.delay_elements`."""
    return lambda flux: flux.delay_elements(delay)


def delay_subscription(delay: float) -> Operator[T, T]:
    """`Flux.delay_subscription`."""
    return lambda flux: flux.delay_subscription(delay)


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
    delay_errors: bool = False,
) -> Operator[T, R]:
    """`Flux.flat_map`."""
    return lambda flux: flux.flat_map(
        fn, concurrency=concurrency, prefetch=prefetch, delay_errors=delay_errors
    )


def flat_map_iterable(fn: Callable[[T], Iterable[R]]) -> Operator[T, R]:
    """`Flux.flat_map_iterable`."""
    return lambda flux: flux.flat_map_iterable(fn)


def flat_map_sequential(
    fn: Callable[[T], Publisher[R] | AsyncIterable[R] | Awaitable[R]],
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    prefetch: int = INNER_PREFETCH,
    delay_errors: bool = False,
) -> Operator[T, R]:
    """`Flux.flat_map_sequential`."""
    return lambda flux: flux.flat_map_sequential(
        fn, concurrency=concurrency, prefetch=prefetch, delay_errors=delay_errors
    )


def group_by(
    key: Callable[[T], K],
    *,
    max_groups: int = DEFAULT_MAX_GROUPS,
    prefetch: int = GROUP_PREFETCH,
) -> Operator[T, tuple[K, Flux[T]]]:
    """`Flux.group_by`."""
    return lambda flux: flux.group_by(key, max_groups=max_groups, prefetch=prefetch)


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


def map_in_thread(
    fn: Callable[[T], R], *, concurrency: int = 1, ordered: bool = True
) -> Operator[T, R]:
    """`Flux.map_in_thread`."""
    return lambda flux: flux.map_in_thread(fn, concurrency=concurrency, ordered=ordered)


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


def publish(*, buffer_size: int = 256) -> Callable[[Flux[T]], ConnectableFlux[T, Flux[T]]]:
    """`Flux.publish`."""
    return lambda flux: flux.publish(buffer_size=buffer_size)


def publish_on(*, buffer_size: int = 256) -> Operator[T, T]:
    """`Flux.publish_on`."""
    return lambda flux: flux.publish_on(buffer_size=buffer_size)


def replay(
    history: int | None = None, *, ttl: float | None = None
) -> Callable[[Flux[T]], ConnectableFlux[T, Flux[T]]]:
    """`Flux.replay`."""
    return lambda flux: flux.replay(history, ttl=ttl)


def retry(max_attempts: int | None = None, *, when: ErrorSelector | None = None) -> Operator[T, T]:
    """`Flux.retry`."""
    return lambda flux: flux.retry(max_attempts, when=when)


def retry_backoff(
    max_attempts: int, *, first_backoff: float, max_backoff: float, jitter: float = 0.5
) -> Operator[T, T]:
    """`Flux.retry_backoff`."""
    return lambda flux: flux.retry_backoff(
        max_attempts, first_backoff=first_backoff, max_backoff=max_backoff, jitter=jitter
    )


def sample(period: float) -> Operator[T, T]:
    """`Flux.sample`."""
    return lambda flux: flux.sample(period)


def scan(fn: Callable[[A, T], A], seed: A = NO_SEED) -> Operator[T, A]:
    """`Flux.scan` (without *seed*, ``A`` is the item type)."""
    return lambda flux: flux.scan(fn, seed)


def share(*, buffer_size: int = 256) -> Operator[T, T]:
    """`Flux.share`."""
    return lambda flux: flux.share(buffer_size=buffer_size)


def skip(count: int) -> Operator[T, T]:
    """`Flux.skip`."""
    return lambda flux: flux.skip(count)


def skip_for(duration: float) -> Operator[T, T]:
    """`Flux.skip_for`."""
    return lambda flux: flux.skip_for(duration)


def skip_last(count: int) -> Operator[T, T]:
    """`Flux.skip_last`."""
    return lambda flux: flux.skip_last(count)


def skip_until(other: Publisher[object]) -> Operator[T, T]:
    """`Flux.skip_until`."""
    return lambda flux: flux.skip_until(other)


def skip_while(predicate: Callable[[T], object]) -> Operator[T, T]:
    """`Flux.skip_while`."""
    return lambda flux: flux.skip_while(predicate)


def start_with(*items: T) -> Operator[T, T]:
    """`Flux.start_with`."""
    return lambda flux: flux.start_with(*items)


def switch_map(
    fn: Callable[[T], Publisher[R] | AsyncIterable[R] | Awaitable[R]],
    *,
    prefetch: int = INNER_PREFETCH,
) -> Operator[T, R]:
    """`Flux.switch_map`."""
    return lambda flux: flux.switch_map(fn, prefetch=prefetch)


def take(count: int) -> Operator[T, T]:
    """`Flux.take`."""
    return lambda flux: flux.take(count)


def take_for(duration: float) -> Operator[T, T]:
    """`Flux.take_for`."""
    return lambda flux: flux.take_for(duration)


def take_last(count: int) -> Operator[T, T]:
    """`Flux.take_last`."""
    return lambda flux: flux.take_last(count)


def take_until(other: Publisher[object]) -> Operator[T, T]:
    """`Flux.take_until`."""
    return lambda flux: flux.take_until(other)


def take_while(predicate: Callable[[T], object]) -> Operator[T, T]:
    """`Flux.take_while`."""
    return lambda flux: flux.take_while(predicate)


def throttle_first(window: float) -> Operator[T, T]:
    """`Flux.throttle_first`."""
    return lambda flux: flux.throttle_first(window)


def throttle_last(period: float) -> Operator[T, T]:
    """`Flux.throttle_last`."""
    return lambda flux: flux.throttle_last(period)


def timeout(seconds: float, *, fallback: Publisher[R] | None = None) -> Operator[T, T | R]:
    """`Flux.timeout`."""
    return lambda flux: flux.timeout(seconds, fallback=fallback)


def window(count: int) -> Operator[T, Flux[T]]:
    """`Flux.window`."""
    return lambda flux: flux.window(count)


def window_timeout(max_size: int, max_time: float) -> Operator[T, Flux[T]]:
    """`Flux.window_timeout`."""
    return lambda flux: flux.window_timeout(max_size, max_time)


def with_latest_from(other: Publisher[R]) -> Operator[T, tuple[T, R]]:
    """`Flux.with_latest_from`."""
    return lambda flux: flux.with_latest_from(other)


def zip_with(other: Publisher[R], *, prefetch: int = INNER_PREFETCH) -> Operator[T, tuple[T, R]]:
    """`Flux.zip_with`."""
    return lambda flux: flux.zip_with(other, prefetch=prefetch)
