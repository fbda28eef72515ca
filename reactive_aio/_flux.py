"""`Flux`: the fluent face over any publisher.

Each method is a thin delegation to one module under ``_sources``, ``_operators`` or
``_sinks``; the behaviour (and its ``Backpressure:``/``Errors:`` notes) lives there.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterable
from typing import Any, Generic, Never, TypeVar, final, overload

import attrs

from ._core import DEBUG, DEBUG_CHECKER, CheckedPublisher, Publisher, Subscriber, require_not_none
from ._operators._concat import ConcatPublisher
from ._operators._concat_map import ConcatMapPublisher
from ._operators._filter import FilterPublisher
from ._operators._flat_map import (
    DEFAULT_CONCURRENCY,
    DEFAULT_PREFETCH as INNER_PREFETCH,
    FlatMapPublisher,
)
from ._operators._flat_map_sequential import FlatMapSequentialPublisher
from ._operators._limit_rate import LimitRatePublisher
from ._operators._map import MapPublisher
from ._operators._merge import MergePublisher
from ._operators._on_backpressure_buffer import on_backpressure_buffer
from ._operators._on_backpressure_drop import on_backpressure_drop
from ._operators._on_backpressure_error import on_backpressure_error
from ._operators._on_backpressure_latest import on_backpressure_latest
from ._operators._publish_on import PublishOnPublisher
from ._operators._take import TakePublisher
from ._sinks._aiter import DEFAULT_PREFETCH, to_async_iterator
from ._sinks._collect import MISSING, collect_first, collect_last, collect_list, collect_reduce
from ._sinks._lambda import Disposable, LambdaSubscriber
from ._sources._create import DEFAULT_OVERFLOW, CreatePublisher, FluxSink
from ._sources._defer import DeferPublisher
from ._sources._empty import EmptyPublisher
from ._sources._error import ErrorPublisher
from ._sources._from_async_iterable import AsyncIterablePublisher
from ._sources._from_iterable import IterablePublisher
from ._sources._never import NeverPublisher
from ._sources._overflow import Overflow, OverflowThen
from ._sources._range import RangePublisher

__all__ = ("Flux",)

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)
R = TypeVar("R")
A = TypeVar("A")
D = TypeVar("D")
U = TypeVar("U")


@final
@attrs.frozen(repr=False)
class Flux(Publisher[T_co], Generic[T_co]):
    """A publisher of ``T`` with operators as methods.

    A `Flux` wraps a `Publisher`; operators return new fluxes and subscribing to one
    subscribes the whole chain. Cold sources start afresh for every subscriber.
    """

    _source: Publisher[T_co]

    if DEBUG:  # REACTIVE_AIO_DEBUG=1: check every stage's signals, naming where it was built

        def __attrs_post_init__(self) -> None:
            if not isinstance(self._source, CheckedPublisher):
                checked = DEBUG_CHECKER.wrap(self._source)
                object.__setattr__(self, "_source", checked)

    def __repr__(self) -> str:
        return f"Flux({self._source!r})"

    # -- sources -----------------------------------------------------------------------

    @staticmethod
    def just(*items: T) -> Flux[T]:
        """The given items, then completion."""
        return Flux(IterablePublisher(items))

    @staticmethod
    def from_iterable(iterable: Iterable[T]) -> Flux[T]:
        """The items of *iterable*, pulled only as requested."""
        return Flux(IterablePublisher(iterable))

    @staticmethod
    def range(start: int, count: int) -> Flux[int]:
        """``start, start + 1, …, start + count - 1``."""
        return Flux(RangePublisher(start, count))

    @staticmethod
    def empty() -> Flux[Never]:
        """Completes at once."""
        return Flux(EmptyPublisher())

    @staticmethod
    def error(error: BaseException) -> Flux[Never]:
        """Fails at once with *error*."""
        require_not_none(error, "1.9", "the error")
        return Flux(ErrorPublisher(error))

    @staticmethod
    def never() -> Flux[Never]:
        """Never signals after ``on_subscribe``."""
        return Flux(NeverPublisher())

    @staticmethod
    def defer(factory: Callable[[], Publisher[T]]) -> Flux[T]:
        """Calls *factory* for each subscriber and subscribes to what it returns."""
        return Flux(DeferPublisher(factory))

    @staticmethod
    def from_async_iterable(iterable: AsyncIterable[T]) -> Flux[T]:
        """The items of *iterable*, awaited only as requested; cancel closes it."""
        return Flux(AsyncIterablePublisher(iterable))

    @staticmethod
    def from_publisher(publisher: Publisher[T]) -> Flux[T]:
        """Wrap any spec publisher to get the operators."""
        require_not_none(publisher, "1.9", "the publisher")
        if isinstance(publisher, Flux):
            return publisher
        return Flux(publisher)

    # -- sources: push, hot and time ----------------------------------------------------

    @staticmethod
    def create(
        emitter: Callable[[FluxSink[T]], object],
        *,
        overflow: Overflow = DEFAULT_OVERFLOW,
        on_dropped: Callable[[T], object] | None = None,
    ) -> Flux[T]:
        """Call *emitter* with a thread-safe `FluxSink` for each subscriber.

        Backpressure: special; *overflow* (default ``Overflow.BUFFER(256, then="error")``)
        applies to items pushed with ``sink.next`` without demand; ``await sink.send`` waits.
        """
        return Flux(CreatePublisher(emitter, overflow, on_dropped))

    # -- subscribing -------------------------------------------------------------------

    @overload
    def subscribe(self, subscriber: Subscriber[T_co]) -> None: ...

    @overload
    def subscribe(
        self,
        *,
        on_next: Callable[[T_co], object] | None = None,
        on_error: Callable[[BaseException], object] | None = None,
        on_complete: Callable[[], object] | None = None,
        prefetch: int | None = None,
    ) -> Disposable: ...

    def subscribe(
        self,
        subscriber: Subscriber[T_co] | None = MISSING,
        *,
        on_next: Callable[[T_co], object] | None = None,
        on_error: Callable[[BaseException], object] | None = None,
        on_complete: Callable[[], object] | None = None,
        prefetch: int | None = None,
    ) -> Disposable | None:
        """Subscribe a spec `Subscriber`, or callbacks (returning a `Disposable`).

        With callbacks, demand is unbounded unless *prefetch* bounds it; a raising
        ``on_next`` cancels the subscription and goes to ``on_error``.
        """
        if subscriber is not MISSING:
            self._source.subscribe(require_not_none(subscriber, "1.9", "the subscriber"))
            return None
        lambda_subscriber = LambdaSubscriber[T_co](on_next, on_error, on_complete)
        if prefetch is not None:
            if prefetch <= 0:
                raise ValueError(f"prefetch must be > 0, got {prefetch}")
            lambda_subscriber = LambdaSubscriber[T_co](on_next, on_error, on_complete, prefetch)
        self._source.subscribe(lambda_subscriber)
        return lambda_subscriber

    # -- operators ---------------------------------------------------------------------

    def pipe(self, *operators: Callable[[Flux[Any]], Flux[Any]]) -> Flux[Any]:
        """Apply ``Flux -> Flux`` functions left to right: ``f.pipe(a, b)`` is ``b(a(f))``."""
        flux: Flux[Any] = self
        for operator in operators:
            flux = operator(flux)
        return flux

    def __or__(self, operator: Callable[[Flux[T_co]], R]) -> R:
        """``flux | operator`` is ``operator(flux)``."""
        return operator(self)

    def map(self, fn: Callable[[T_co], R]) -> Flux[R]:
        """Apply *fn* to every item. Backpressure: pass-through."""
        return Flux(MapPublisher(self._source, fn))

    def filter(self, predicate: Callable[[T_co], object]) -> Flux[T_co]:
        """Keep items for which *predicate* is true. Backpressure: pass-through, drops re-requested."""
        return Flux(FilterPublisher(self._source, predicate))

    def take(self, count: int) -> Flux[T_co]:
        """The first *count* items, then cancel upstream. Backpressure: capped at *count*."""
        return Flux(TakePublisher(self._source, count))

    # -- operators: transform, filter, side effects, error handling ---------------------
    # (one operator per module under _operators; keep each method a thin delegation)

    # -- operators: flatten and combine ------------------------------------------------
    # (fn may return a Publisher, an async iterable or an awaitable: the returned object's
    # kind decides, see _operators/_as_publisher.py)

    def flat_map(
        self,
        fn: Callable[[T_co], Publisher[R] | AsyncIterable[R] | Awaitable[R]],
        *,
        concurrency: int = DEFAULT_CONCURRENCY,
        prefetch: int = INNER_PREFETCH,
    ) -> Flux[R]:
        """Map each item to an inner stream and merge them as they emit (unordered).

        Backpressure: at most *concurrency* inner streams at once, each prefetching *prefetch*.
        """
        return Flux(FlatMapPublisher(self._source, fn, concurrency, prefetch))

    def flat_map_sequential(
        self,
        fn: Callable[[T_co], Publisher[R] | AsyncIterable[R] | Awaitable[R]],
        *,
        concurrency: int = DEFAULT_CONCURRENCY,
        prefetch: int = INNER_PREFETCH,
    ) -> Flux[R]:
        """Like `flat_map`, inner streams run concurrently, but emit in outer order.

        Backpressure: at most *concurrency* inner streams at once, each prefetching *prefetch*.
        """
        return Flux(FlatMapSequentialPublisher(self._source, fn, concurrency, prefetch))

    def concat_map(
        self,
        fn: Callable[[T_co], Publisher[R] | AsyncIterable[R] | Awaitable[R]],
        *,
        prefetch: int = INNER_PREFETCH,
    ) -> Flux[R]:
        """Map each item to an inner stream, played one after another, in order.

        Backpressure: one outer item at a time; the inner stream prefetches *prefetch*.
        """
        return Flux(ConcatMapPublisher(self._source, fn, prefetch))

    @staticmethod
    def merge(
        *sources: Publisher[T], concurrency: int | None = None, prefetch: int = INNER_PREFETCH
    ) -> Flux[T]:
        """The items of all *sources* as they come.

        Backpressure: *concurrency* (default: all) sources at once, each prefetching *prefetch*.
        """
        return Flux(MergePublisher(sources, concurrency, prefetch))

    def merge_with(self, other: Publisher[U], *, prefetch: int = INNER_PREFETCH) -> Flux[T_co | U]:
        """This stream's items and *other*'s, as they come. Backpressure: prefetch per source."""
        sources: tuple[Publisher[T_co | U], ...] = (self._source, other)
        return Flux(MergePublisher(sources, None, prefetch))

    @staticmethod
    def concat(*sources: Publisher[T], prefetch: int = INNER_PREFETCH) -> Flux[T]:
        """The items of *sources*, one source after the other.

        Backpressure: the current source prefetches *prefetch*.
        """
        return Flux(ConcatPublisher(sources, prefetch))

    def concat_with(self, other: Publisher[U], *, prefetch: int = INNER_PREFETCH) -> Flux[T_co | U]:
        """This stream's items, then *other*'s. Backpressure: the current source prefetches."""
        sources: tuple[Publisher[T_co | U], ...] = (self._source, other)
        return Flux(ConcatPublisher(sources, prefetch))

    # -- operators: boundaries, demand shaping, backpressure, sharing --------------------

    def publish_on(self, *, buffer_size: int = 256) -> Flux[T_co]:
        """Deliver downstream from a drain on the loop. Backpressure: buffer(buffer_size)."""
        return Flux(PublishOnPublisher(self._source, buffer_size))

    def limit_rate(self, high: int, low: int | None = None) -> Flux[T_co]:
        """Ask upstream for *high*, then *low* (default 3/4 of *high*) at a time."""
        return Flux(LimitRatePublisher(self._source, high, low))

    def on_backpressure_buffer(
        self,
        max_size: int,
        *,
        overflow: OverflowThen = "error",
        on_overflow: Callable[[T_co], object] | None = None,
    ) -> Flux[T_co]:
        """Buffer up to *max_size* undelivered items, then apply *overflow*.

        Backpressure: unbounded-in, buffer(max_size).
        """
        return Flux(on_backpressure_buffer(self._source, max_size, overflow, on_overflow))

    def on_backpressure_drop(
        self, on_dropped: Callable[[T_co], object] | None = None
    ) -> Flux[T_co]:
        """Drop items that arrive without demand. Backpressure: unbounded-in, drop."""
        return Flux(on_backpressure_drop(self._source, on_dropped))

    def on_backpressure_latest(self) -> Flux[T_co]:
        """Keep only the newest undelivered item. Backpressure: unbounded-in, latest."""
        return Flux(on_backpressure_latest(self._source))

    def on_backpressure_error(self) -> Flux[T_co]:
        """Fail with `MissingBackpressureError` on the first item without demand."""
        return Flux(on_backpressure_error(self._source))

    # -- operators: time ----------------------------------------------------------------

    # -- consuming ---------------------------------------------------------------------

    async def to_list(self) -> list[T_co]:
        """All items, in order."""
        return await collect_list(self._source)

    @overload
    async def first(self) -> T_co: ...

    @overload
    async def first(self, default: D) -> T_co | D: ...

    async def first(self, default: Any = MISSING) -> Any:
        """The first item (the rest is cancelled); *default*, else `NoSuchElementError`, if empty."""
        return await collect_first(self._source, default)

    @overload
    async def last(self) -> T_co: ...

    @overload
    async def last(self, default: D) -> T_co | D: ...

    async def last(self, default: Any = MISSING) -> Any:
        """The last item; *default*, else `NoSuchElementError`, if empty."""
        return await collect_last(self._source, default)

    async def reduce(self, fn: Callable[[A, T_co], A], seed: A) -> A:
        """Fold every item into *seed* with *fn*."""
        return await collect_reduce(self._source, fn, seed)

    def __aiter__(self) -> AsyncIterator[T_co]:
        return to_async_iterator(self._source, prefetch=DEFAULT_PREFETCH)

    def iterate(self, *, prefetch: int = DEFAULT_PREFETCH) -> AsyncIterator[T_co]:
        """An async iterator with a *prefetch* demand window."""
        return to_async_iterator(self._source, prefetch=prefetch)
