"""`Flux`: the fluent face over any publisher.

Each method is a thin delegation to one module under ``_sources``, ``_operators`` or
``_sinks``; the behaviour (and its ``Backpressure:``/``Errors:`` notes) lives there.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable
from typing import Any, Generic, Never, TypeVar, final, overload

import attrs

from ._core import Publisher, Subscriber, require_not_none
from ._operators._filter import FilterPublisher
from ._operators._map import MapPublisher
from ._operators._take import TakePublisher
from ._sinks._aiter import DEFAULT_PREFETCH, to_async_iterator
from ._sinks._collect import MISSING, collect_first, collect_last, collect_list, collect_reduce
from ._sinks._lambda import Disposable, LambdaSubscriber
from ._sources._defer import DeferPublisher
from ._sources._empty import EmptyPublisher
from ._sources._error import ErrorPublisher
from ._sources._from_async_iterable import AsyncIterablePublisher
from ._sources._from_iterable import IterablePublisher
from ._sources._never import NeverPublisher
from ._sources._range import RangePublisher

__all__ = ("Flux",)

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)
R = TypeVar("R")
A = TypeVar("A")
D = TypeVar("D")


@final
@attrs.frozen(repr=False)
class Flux(Publisher[T_co], Generic[T_co]):
    """A publisher of ``T`` with operators as methods.

    A `Flux` wraps a `Publisher`; operators return new fluxes and subscribing to one
    subscribes the whole chain. Cold sources start afresh for every subscriber.
    """

    _source: Publisher[T_co]

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

    # -- operators: boundaries, demand shaping, backpressure, sharing --------------------

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
