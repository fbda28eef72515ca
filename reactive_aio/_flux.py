"""`Flux`: the fluent face over any publisher.

Each method is a thin delegation to one module under ``_sources``, ``_operators`` or
``_sinks``; the behaviour (and its ``Backpressure:``/``Errors:`` notes) lives there.
"""

from __future__ import annotations

import functools
import logging
import sys
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    AsyncIterator,
    Awaitable,
    Callable,
    Hashable,
    Iterable,
    Iterator,
)
from contextlib import AbstractAsyncContextManager
from types import FunctionType
from typing import TYPE_CHECKING, Any, Generic, Never, TypeVar, final, overload

import attrs

from ._core import (
    DEBUG,
    DEBUG_CHECKER,
    Assembly,
    CheckedPublisher,
    FusedPublisher,
    ItemsSubscriber,
    LoopBound,
    Overflow,
    OverflowThen,
    Publisher,
    Subscriber,
    Subscription,
    SyncInner,
    SyncOwner,
    SyncSource,
    adopt,
    iterate_awaiting,
    require_not_none,
    require_publisher,
    subscribe_pulled,
)
from ._operators._batch import BatchPublisher
from ._operators._buffer import BufferPublisher
from ._operators._buffer_boundary import BufferBoundaryPublisher
from ._operators._buffer_timeout import BufferTimeoutPublisher
from ._operators._buffer_until import BufferUntilPublisher
from ._operators._buffer_while import BufferWhilePublisher
from ._operators._checkpoint import CheckpointPublisher
from ._operators._combine_latest import CombineLatestPublisher
from ._operators._concat import ConcatPublisher
from ._operators._concat_map import ConcatMapPublisher
from ._operators._debounce import DebouncePublisher, DebounceSelectorPublisher
from ._operators._default_if_empty import DefaultIfEmptyPublisher
from ._operators._delay import DelayPublisher
from ._operators._delay_elements import DelayElementsPublisher
from ._operators._delay_subscription import DelaySubscriptionPublisher
from ._operators._delay_until import delay_until_publisher
from ._operators._dematerialize import DematerializePublisher
from ._operators._distinct import DistinctPublisher
from ._operators._distinct_until_changed import DistinctUntilChangedPublisher
from ._operators._do_finally import DoFinallyPublisher, EndSignal
from ._operators._elapsed import ElapsedPublisher
from ._operators._element_at import NO_DEFAULT, ElementAtPublisher
from ._operators._expand import ExpandDeepPublisher, ExpandPublisher
from ._operators._filter import filter_publisher
from ._operators._filter_when import filter_when_publisher
from ._operators._flat_map import (
    DEFAULT_CONCURRENCY,
    DEFAULT_PREFETCH as INNER_PREFETCH,
    FlatMapPublisher,
)
from ._operators._flat_map_iterable import FlatMapIterablePublisher
from ._operators._flat_map_sequential import FlatMapSequentialPublisher
from ._operators._group_by import DEFAULT_MAX_GROUPS, GROUP_PREFETCH, GroupByPublisher
from ._operators._ignore_elements import IgnoreElementsPublisher
from ._operators._index import IndexPublisher
from ._operators._limit_rate import LimitRatePublisher
from ._operators._log import log_publisher
from ._operators._map import map_publisher
from ._operators._map_async import MapAsyncPublisher
from ._operators._map_in_thread import MapInThreadPublisher
from ._operators._map_skip_errors import MapSkipErrorsPublisher
from ._operators._materialize import MaterializePublisher, Notification
from ._operators._merge import MergePublisher
from ._operators._metrics import metrics_publisher
from ._operators._name import label
from ._operators._of_type import OfTypePublisher
from ._operators._on_backpressure_buffer import on_backpressure_buffer
from ._operators._on_backpressure_drop import on_backpressure_drop
from ._operators._on_backpressure_error import on_backpressure_error
from ._operators._on_backpressure_latest import on_backpressure_latest
from ._operators._on_error_map import OnErrorMapPublisher
from ._operators._on_error_resume import OnErrorResumePublisher
from ._operators._on_error_return import ErrorSelector, OnErrorReturnPublisher
from ._operators._pairwise import PairwisePublisher
from ._operators._peek import PeekPublisher
from ._operators._publish import ConnectableFlux, publish
from ._operators._publish_on import PublishOnPublisher
from ._operators._race import RacePublisher
from ._operators._repeat import RepeatPublisher
from ._operators._repeat_when import RepeatWhenPublisher
from ._operators._replay import replay
from ._operators._retry import RetryPublisher
from ._operators._retry_when import Retry, RetryWhenPublisher
from ._operators._sample import SamplePublisher, SamplerPublisher
from ._operators._scan import NO_SEED, ScanPublisher
from ._operators._share import share
from ._operators._skip import SkipPublisher
from ._operators._skip_for import SkipForPublisher
from ._operators._skip_last import SkipLastPublisher
from ._operators._skip_until import SkipUntilPublisher
from ._operators._skip_while import SkipWhilePublisher
from ._operators._start_with import StartWithPublisher
from ._operators._switch_map import SwitchMapPublisher
from ._operators._switch_on_first import SwitchOnFirstPublisher
from ._operators._take import TakePublisher
from ._operators._take_for import TakeForPublisher
from ._operators._take_last import TakeLastPublisher
from ._operators._take_until import TakeUntilPublisher
from ._operators._take_while import TakeWhilePublisher
from ._operators._then import ThenPublisher
from ._operators._throttle_first import ThrottleFirstPublisher
from ._operators._timeout import TimeoutPublisher
from ._operators._window import WindowPublisher
from ._operators._window_boundary import WindowBoundaryPublisher
from ._operators._window_timeout import WindowTimeoutPublisher
from ._operators._window_until import WindowUntilPublisher
from ._operators._window_until_changed import WindowUntilChangedPublisher
from ._operators._window_while import WindowWhilePublisher
from ._operators._with_latest_from import WithLatestFromPublisher
from ._operators._zip import ZipPublisher
from ._sinks._aiter import DEFAULT_PREFETCH, iterate_batches, to_async_iterator
from ._sinks._collect import (
    MISSING,
    collect_all,
    collect_any,
    collect_contains,
    collect_count,
    collect_dict,
    collect_first,
    collect_is_empty,
    collect_last,
    collect_list,
    collect_multidict,
    collect_reduce,
    collect_sorted_list,
)
from ._sinks._lambda import Disposable, LambdaSubscriber
from ._sources._create import DEFAULT_OVERFLOW, CreatePublisher, FluxSink
from ._sources._defer import DeferPublisher
from ._sources._empty import EmptyPublisher
from ._sources._error import ErrorPublisher
from ._sources._from_async_iterable import AsyncIterablePublisher
from ._sources._from_iterable import IterablePublisher
from ._sources._interval import IntervalPublisher
from ._sources._never import NeverPublisher
from ._sources._range import RangePublisher
from ._sources._timer import TimerPublisher
from ._sources._using import UsingAsyncPublisher, UsingPublisher, using_context

if TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider

__all__ = ("Flux",)

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)
R = TypeVar("R")
A = TypeVar("A")
D = TypeVar("D")
K = TypeVar("K", bound=Hashable)
U = TypeVar("U")
V = TypeVar("V")
T1 = TypeVar("T1")
T2 = TypeVar("T2")
T3 = TypeVar("T3")
T4 = TypeVar("T4")


_SIGNALS = ("on_subscribe", "on_next", "on_error", "on_complete")


def _require_subscriber(subscriber: Subscriber[T] | None) -> Subscriber[T]:
    """*subscriber*, or a clear error for ``None`` (rule 1.9), ``subscribe(print)`` and other
    things that are no subscriber."""
    checked = require_not_none(subscriber, "1.9", "the subscriber")
    missing = [name for name in _SIGNALS if not callable(getattr(checked, name, None))]
    if not missing:
        return checked
    what = getattr(subscriber, "__qualname__", None) or type(subscriber).__name__
    hint = (
        f"; to call a function per item, use subscribe(on_next={what})"
        if callable(subscriber)
        else ""
    )
    raise TypeError(
        f"subscribe() takes a Subscriber (with {', '.join(_SIGNALS)}); {what} has no "
        f"{', '.join(missing)}{hint}"
    )


def _same(value: T) -> T:
    return value


def _adopt_all(sources: tuple[Publisher[T], ...]) -> tuple[Publisher[T], ...]:
    return tuple(adopt(source) for source in sources)


@final
@attrs.frozen(repr=False)
class Flux(Publisher[T_co], SyncSource[T_co], LoopBound, Generic[T_co]):
    """A publisher of ``T`` with operators as methods.

    A `Flux` wraps a `Publisher`; operators return new fluxes and subscribing to one
    subscribes the whole chain. Cold sources start afresh for every subscriber.

    Every publisher that enters from outside the library (``from_publisher``, the publishers
    operators take, the ones user functions return) is adopted at the loop boundary: its
    signals reach the chain inside the subscriber's loop, whatever thread sends them.
    """

    _source: Publisher[T_co]
    _assembly: Assembly | None = attrs.field(init=False, eq=False)
    """Where the operator that made this flux was called (see `_recorded`); unset for sources."""

    if DEBUG:  # REACTIVE_AIO_DEBUG=1: check every stage's signals, naming where it was built

        def __attrs_post_init__(self) -> None:
            if not isinstance(self._source, CheckedPublisher):
                made_by = sys._getframe(1).f_back  # the method, if a Flux method made this flux
                code = made_by.f_code if made_by is not None else None
                name = code.co_name if code and code.co_qualname.startswith("Flux.") else None
                checked = DEBUG_CHECKER.wrap(self._source, name)
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
        """The items of *iterable*, pulled only as requested.

        A generator or iterator is read by the first subscriber; a later one gets an error
        (``Flux.defer(lambda: Flux.from_iterable(gen()))`` reads a new one per subscriber).
        """
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
        """The items of *iterable*, awaited only as requested; cancel closes it.

        An async generator or iterator is read by the first subscriber; a later one gets an
        error (``Flux.defer(lambda: Flux.from_async_iterable(gen()))`` reads a new one per
        subscriber).
        """
        return Flux(AsyncIterablePublisher(iterable))

    @staticmethod
    def from_publisher(publisher: Publisher[T]) -> Flux[T]:
        """Wrap any spec publisher to get the operators.

        A publisher of another library may signal from any thread: its signals are handed to
        the loop that subscribes, in order and in batches (see the loops and threads page).
        """
        require_publisher(publisher, "from_publisher")
        if isinstance(publisher, Flux):
            return publisher
        return Flux(adopt(publisher))

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

    @staticmethod
    def interval(period: float, *, delay: float | None = None) -> Flux[int]:
        """``0, 1, 2, …`` every *period* seconds (first after *delay*, default *period*).

        Backpressure: a tick without demand fails with `MissingBackpressureError`.
        """
        return Flux(IntervalPublisher(period, delay))

    @staticmethod
    def timer(delay: float) -> Flux[int]:
        """The single item ``0`` after *delay* seconds, then completion."""
        return Flux(TimerPublisher(delay))

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
        ``on_next`` cancels the subscription and goes to ``on_error``. A subscriber that
        takes items in lists (`reactive_aio.lowlevel.ItemsSubscriber`, such as
        ``to_postgres``) pulls the items of a source at hand a request at a time.
        """
        if subscriber is not MISSING:
            checked = _require_subscriber(subscriber)
            if not (
                isinstance(checked, ItemsSubscriber) and subscribe_pulled(checked, self._source)
            ):
                self._source.subscribe(checked)
            return None
        lambda_subscriber = LambdaSubscriber[T_co](on_next, on_error, on_complete)
        if prefetch is not None:
            if prefetch <= 0:
                raise ValueError(f"prefetch must be > 0, got {prefetch}")
            lambda_subscriber = LambdaSubscriber[T_co](on_next, on_error, on_complete, prefetch)
        self._source.subscribe(lambda_subscriber)
        return lambda_subscriber

    def sync_iterator(self) -> Iterator[T_co] | None:
        """The items as a plain iterator when they are at hand (``range``, ``from_iterable``,
        ``just``, maps and filters over those), else ``None``: what ``flat_map`` and the
        operators built on it pull an inner stream through instead of subscribing to it."""
        source = self._source
        return source.sync_iterator() if isinstance(source, SyncSource) else None

    def sync_inner(self, owner: SyncOwner) -> SyncInner[T_co] | None:
        """`sync_iterator` as an inner of *owner*'s drain (see `SyncSource`), or ``None``."""
        source = self._source
        return source.sync_inner(owner) if isinstance(source, SyncSource) else None

    def fused_chain(self) -> FusedPublisher[Any] | None:
        """The fused chain of maps and filters this flux is, if any (see
        `reactive_aio.lowlevel.fusion_source`)."""
        source = self._source
        return source.fused_chain() if isinstance(source, SyncSource) else None

    # -- composing ---------------------------------------------------------------------

    def pipe(self, *operators: Callable[[Flux[Any]], Flux[Any]]) -> Flux[Any]:
        """Apply ``Flux -> Flux`` functions left to right: ``f.pipe(a, b)`` is ``b(a(f))``."""
        flux: Flux[Any] = self
        for operator in operators:
            flux = operator(flux)
        return flux

    def __or__(self, operator: Callable[[Flux[T_co]], R]) -> R:
        """``flux | operator`` is ``operator(flux)``."""
        return operator(self)

    # -- operators: map, filter, take -----------------------------------------------------

    def map(self, fn: Callable[[T_co], R]) -> Flux[R]:
        """Apply *fn* to every item. Backpressure: pass-through."""
        return Flux(map_publisher(self._source, fn))

    def filter(self, predicate: Callable[[T_co], object]) -> Flux[T_co]:
        """Keep items for which *predicate* is true. Backpressure: pass-through, drops re-requested."""
        return Flux(filter_publisher(self._source, predicate))

    def take(self, count: int) -> Flux[T_co]:
        """The first *count* items, then cancel upstream. Backpressure: capped at *count*."""
        return Flux(TakePublisher(self._source, count))

    # -- operators: transform, filter, side effects, error handling ---------------------
    # (one operator per module under _operators; keep each method a thin delegation)

    @staticmethod
    def using(
        acquire: Callable[[], A],
        use: Callable[[A], Publisher[T]],
        release: Callable[[A], object],
    ) -> Flux[T]:
        """Per subscriber: ``acquire()``, stream ``use(resource)``, then ``release(resource)``
        once the stream ends (terminal signal or cancel)."""
        return Flux(UsingPublisher(acquire, use, release))

    @staticmethod
    def using_async(
        acquire: Callable[[], Awaitable[A]],
        use: Callable[[A], Publisher[T]],
        release: Callable[[A, BaseException | None], Awaitable[object]],
    ) -> Flux[T]:
        """`using` with awaited *acquire* and ``release(resource, error_or_None)``, run in tasks."""
        return Flux(UsingAsyncPublisher(acquire, use, release))

    @staticmethod
    def using_context(
        factory: Callable[[], AbstractAsyncContextManager[A]], use: Callable[[A], Publisher[T]]
    ) -> Flux[T]:
        """Per subscriber: ``async with factory() as resource``, streaming ``use(resource)``;
        the context exits (with the stream's error, if any) once the stream ends."""
        return Flux(using_context(factory, use))

    @overload
    def scan(self: Flux[T], fn: Callable[[T, T], T]) -> Flux[T]: ...

    @overload
    def scan(self, fn: Callable[[A, T_co], A], seed: A) -> Flux[A]: ...

    def scan(self, fn: Callable[[Any, Any], Any], seed: Any = NO_SEED) -> Flux[Any]:
        """Every intermediate fold result (the seed is not emitted). Backpressure: pass-through."""
        return Flux(ScanPublisher(self._source, fn, seed))

    def index(self) -> Flux[tuple[int, T_co]]:
        """``(position, item)`` pairs. Backpressure: pass-through."""
        return Flux(IndexPublisher(self._source))

    def take_while(
        self, predicate: Callable[[T_co], object], *, inclusive: bool = False
    ) -> Flux[T_co]:
        """Items until the first one failing *predicate* (emitted too if *inclusive*), then
        cancel upstream."""
        return Flux(TakeWhilePublisher(self._source, predicate, inclusive))

    def take_last(self, count: int) -> Flux[T_co]:
        """The last *count* items, once upstream completes. Backpressure: upstream unbounded."""
        return Flux(TakeLastPublisher(self._source, count))

    def take_until(self, other: Publisher[object]) -> Flux[T_co]:
        """Items until *other* emits, then cancel both. Backpressure: pass-through."""
        return Flux(TakeUntilPublisher(self._source, adopt(other)))

    def skip_until(self, other: Publisher[object]) -> Flux[T_co]:
        """Drop items until *other* emits. Backpressure: drops re-requested."""
        return Flux(SkipUntilPublisher(self._source, adopt(other)))

    def skip(self, count: int) -> Flux[T_co]:
        """Drop the first *count* items. Backpressure: first request raised by *count*."""
        return Flux(SkipPublisher(self._source, count))

    def skip_last(self, count: int) -> Flux[T_co]:
        """Drop the last *count* items. Backpressure: first request raised by *count*."""
        return Flux(SkipLastPublisher(self._source, count))

    def skip_while(self, predicate: Callable[[T_co], object]) -> Flux[T_co]:
        """Drop items while *predicate* holds. Backpressure: drops re-requested."""
        return Flux(SkipWhilePublisher(self._source, predicate))

    def distinct(self, key: Callable[[T_co], Hashable] | None = None) -> Flux[T_co]:
        """Drop items whose key was seen before. Backpressure: drops re-requested."""
        return Flux(DistinctPublisher(self._source, key))

    @overload
    def distinct_until_changed(
        self, key: None = None, *, comparer: Callable[[T_co, T_co], object] | None = None
    ) -> Flux[T_co]: ...

    @overload
    def distinct_until_changed(
        self, key: Callable[[T_co], K], *, comparer: Callable[[K, K], object] | None = None
    ) -> Flux[T_co]: ...

    def distinct_until_changed(
        self,
        key: Callable[[T_co], Any] | None = None,
        *,
        comparer: Callable[[Any, Any], object] | None = None,
    ) -> Flux[T_co]:
        """Drop items whose key equals the previous one's (``==``, or ``comparer(prev, key)``).

        Backpressure: drops re-requested.
        """
        return Flux(DistinctUntilChangedPublisher(self._source, key, comparer))

    def of_type(self, cls: type[R] | tuple[type[R], ...]) -> Flux[R]:
        """Keep instances of *cls* only. Backpressure: drops re-requested."""
        return Flux(OfTypePublisher(self._source, cls))

    def pairwise(self) -> Flux[tuple[T_co, T_co]]:
        """``(previous, current)`` pairs. Backpressure: pass-through."""
        return Flux(PairwisePublisher(self._source))

    @overload
    def element_at(self, index: int) -> Flux[T_co]: ...

    @overload
    def element_at(self, index: int, default: R) -> Flux[T_co | R]: ...

    def element_at(self, index: int, default: Any = NO_DEFAULT) -> Flux[Any]:
        """Only the item at *index*; *default*, else `IndexError`, if the stream is shorter."""
        return Flux(ElementAtPublisher(self._source, index, default))

    def default_if_empty(self, value: R) -> Flux[T_co | R]:
        """*value* if the stream completes without items. Backpressure: pass-through."""
        return Flux(DefaultIfEmptyPublisher(self._source, value))

    def ignore_elements(self) -> Flux[Never]:
        """Only the source's completion or error; its items are dropped. Backpressure: unbounded-in."""
        return Flux(IgnoreElementsPublisher(self._source))

    @overload
    def then(self) -> Flux[Never]: ...

    @overload
    def then(self, other: Publisher[R]) -> Flux[R]: ...

    def then(self, other: Publisher[Any] | None = None) -> Flux[Any]:
        """Once the source completed (its items dropped), the items of *other*; else complete.

        Backpressure: the source unbounded; *other* gets the outstanding demand.
        """
        if other is None:
            return Flux(IgnoreElementsPublisher(self._source))
        return Flux(ThenPublisher(self._source, adopt(other)))

    def materialize(self) -> Flux[Notification[T_co]]:
        """Every signal as a `Notification` item, the terminal one last, then completion."""
        return Flux(MaterializePublisher(self._source))

    def dematerialize(self: Flux[Notification[T]]) -> Flux[T]:
        """`Notification` items back into signals (the reverse of `materialize`)."""
        return Flux(DematerializePublisher(self._source))

    def start_with(self, *items: R) -> Flux[T_co | R]:
        """*items* first, then the source's items. Backpressure: full."""
        return Flux(StartWithPublisher(self._source, items))

    @overload
    def buffer(self, count: int, skip: int | None = None) -> Flux[list[T_co]]: ...

    @overload
    def buffer(self, boundary: Publisher[object], /) -> Flux[list[T_co]]: ...

    def buffer(self, count: int | Publisher[object], skip: int | None = None) -> Flux[list[T_co]]:
        """Lists of *count* items, one every *skip*; or cut by each item of a *boundary*.

        *skip* defaults to *count*; with a *boundary* publisher, a list holds the items between
        two of its items (empty lists are not emitted).
        """
        if not isinstance(count, int):
            return Flux(BufferBoundaryPublisher(self._source, count))
        return Flux(BufferPublisher(self._source, count, count if skip is None else skip))

    def buffer_until(
        self, predicate: Callable[[T_co], object], *, cut_before: bool = False
    ) -> Flux[list[T_co]]:
        """Lists closed by each item passing *predicate* (it ends its list, or starts the next
        with *cut_before*). Backpressure: one item per list asked, the rest re-requested."""
        return Flux(BufferUntilPublisher(self._source, predicate, cut_before))

    def buffer_while(self, predicate: Callable[[T_co], object]) -> Flux[list[T_co]]:
        """Lists of consecutive items passing *predicate*; a failing item closes one (dropped).

        Backpressure: one item per list asked, the rest re-requested.
        """
        return Flux(BufferWhilePublisher(self._source, predicate))

    @overload
    def window(self, count: int, skip: int | None = None) -> Flux[Flux[T_co]]: ...

    @overload
    def window(self, boundary: Publisher[object], /) -> Flux[Flux[T_co]]: ...

    def window(self, count: int | Publisher[object], skip: int | None = None) -> Flux[Flux[T_co]]:
        """Windows of *count* items, one every *skip*; or cut by each item of a *boundary*.

        *skip* defaults to *count*; with a *boundary* publisher, a window holds the items
        between two of its items. Each window is a `Flux` with its own demand.

        Backpressure: ``request(n)`` windows asks upstream for the items they need (as
        `buffer`); overlapping windows opened before they are requested are held. With a
        boundary, both are requested without bound.
        """
        if not isinstance(count, int):
            return Flux(WindowBoundaryPublisher(self._source, count, Flux))
        return Flux(WindowPublisher(self._source, count, count if skip is None else skip, Flux))

    def window_until(
        self, predicate: Callable[[T_co], object], *, cut_before: bool = False
    ) -> Flux[Flux[T_co]]:
        """Windows closed by each item passing *predicate*; *cut_before* opens the next with it.

        Backpressure: one item at a time, once it has a taker.
        """
        return Flux(WindowUntilPublisher(self._source, predicate, cut_before, Flux))

    def window_while(self, predicate: Callable[[T_co], object]) -> Flux[Flux[T_co]]:
        """Windows of consecutive items passing *predicate*; a failing item closes one (dropped).

        Backpressure: one item at a time, once it has a taker.
        """
        return Flux(WindowWhilePublisher(self._source, predicate, Flux))

    def window_until_changed(self, key: Callable[[T_co], object] | None = None) -> Flux[Flux[T_co]]:
        """Windows of consecutive items with equal ``key(item)`` (the item without *key*).

        Backpressure: one item at a time, once it has a taker.
        """
        return Flux(WindowUntilChangedPublisher(self._source, key, Flux))

    def group_by(
        self,
        key: Callable[[T_co], K],
        *,
        max_groups: int = DEFAULT_MAX_GROUPS,
        prefetch: int = GROUP_PREFETCH,
    ) -> Flux[tuple[K, Flux[T_co]]]:
        """``(key, group)`` for every new key; each group is a `Flux` of that key's items.

        Every group must be consumed (or cancelled): unconsumed groups hold upstream's
        *prefetch* and stall the stream; more than *max_groups* open groups is an error.
        """
        return Flux(
            GroupByPublisher(
                source=self._source,
                key=key,
                wrap=Flux,
                max_groups=max_groups,
                prefetch=prefetch,
            )
        )

    def flat_map_iterable(self, fn: Callable[[T_co], Iterable[R]]) -> Flux[R]:
        """The elements of ``fn(item)`` for every item, in order. Backpressure: full."""
        return Flux(FlatMapIterablePublisher(self._source, fn))

    def map_async(
        self, fn: Callable[[T_co], Awaitable[R]], *, concurrency: int = 1, ordered: bool = True
    ) -> Flux[R]:
        """Await ``fn(item)`` for every item, at most *concurrency* calls at once.

        Results keep item order unless *ordered* is false. Backpressure: a window of 32 items
        (or *concurrency*, if more) bounds waiting items + running calls + undelivered results;
        one call at a time over items at hand (``range``, ``from_iterable``, their maps), a
        call is made only for an item asked for, and a fold awaits the calls in its own loop.
        """
        return Flux(
            MapAsyncPublisher(source=self._source, fn=fn, concurrency=concurrency, ordered=ordered)
        )

    def map_skip_errors(
        self,
        fn: Callable[[T_co], R],
        *,
        on_dropped: Callable[[T_co, Exception], object] | None = None,
    ) -> Flux[R]:
        """``map`` that skips an item whose *fn* raises (or returns None), reporting it.

        ``on_dropped(item, error)`` is told of every skipped item (default: a warning on the
        ``reactive_aio`` logger). Backpressure: pass-through, skips re-requested.
        """
        return Flux(MapSkipErrorsPublisher(self._source, fn, on_dropped))

    def checkpoint(self, description: str) -> Flux[T_co]:
        """Name this place in the stream: an error passing it gets a note with *description*,
        this line, and the operators it came through, from the one whose function raised it.

        Not Spark's checkpoint (a directory: ``from_streaming_query(checkpoint=DIR)``, the
        ``checkpointLocation`` of a query over ``to_spark_stream``). Backpressure: pass-through.
        """
        here = Assembly.record("checkpoint", (), _assembly_of(self))
        return Flux(CheckpointPublisher(self._source, description, here))

    def do_on_next(self, fn: Callable[[T_co], object]) -> Flux[T_co]:
        """Call *fn* with every item before passing it on."""
        return Flux(PeekPublisher(source=self._source, on_next=fn))

    def do_on_error(self, fn: Callable[[BaseException], object]) -> Flux[T_co]:
        """Call *fn* with the error before passing it on."""
        return Flux(PeekPublisher(source=self._source, on_error=fn))

    def do_on_complete(self, fn: Callable[[], object]) -> Flux[T_co]:
        """Call *fn* before passing completion on."""
        return Flux(PeekPublisher(source=self._source, on_complete=fn))

    def do_on_subscribe(self, fn: Callable[[Subscription], object]) -> Flux[T_co]:
        """Call *fn* with the upstream subscription before passing ``on_subscribe`` on."""
        return Flux(PeekPublisher(source=self._source, on_subscribe=fn))

    def do_on_request(self, fn: Callable[[int], object]) -> Flux[T_co]:
        """Call *fn* with every downstream request before passing it upstream."""
        return Flux(PeekPublisher(source=self._source, on_request=fn))

    def do_on_cancel(self, fn: Callable[[], object]) -> Flux[T_co]:
        """Call *fn* when downstream cancels, before cancelling upstream."""
        return Flux(PeekPublisher(source=self._source, on_cancel=fn))

    def do_finally(self, fn: Callable[[EndSignal], object]) -> Flux[T_co]:
        """Call *fn* once with ``"complete"``, ``"error"`` or ``"cancel"`` when the stream ends."""
        return Flux(DoFinallyPublisher(self._source, fn))

    def log(self, name: str | None = None, *, level: int = logging.INFO) -> Flux[T_co]:
        """Log every signal to the ``reactive_aio`` logger as ``"<name> | <signal>"``; *name*
        defaults to the stream's `name` upstream."""
        return Flux(log_publisher(self._source, name, level))

    def metrics(self, *, meter_provider: MeterProvider | None = None) -> Flux[T_co]:
        """Record subscriptions, requests, items, their delays and the flow's duration through
        OpenTelemetry (the ``otel`` extra), named and tagged by the `name` and `tag` upstream;
        *meter_provider* defaults to the global one."""
        return Flux(metrics_publisher(self._source, meter_provider))

    def name(self, name: str) -> Flux[T_co]:
        """Name the stream for `metrics`, `log` and ``snapshot``; costs nothing per item."""
        return Flux(label(self._source, name))

    def tag(self, key: str, value: str) -> Flux[T_co]:
        """Tag the stream with *key* = *value* for `metrics` and ``snapshot``; costs nothing per
        item."""
        return Flux(label(self._source, tags=((key, value),)))

    def on_error_resume(
        self, fn: Callable[[BaseException], Publisher[R]], *, when: ErrorSelector | None = None
    ) -> Flux[T_co | R]:
        """On an error selected by *when* (classes or a predicate; default all), continue with
        ``fn(error)``. Backpressure: outstanding demand carried over."""
        source: Publisher[T_co | R] = self._source
        return Flux(OnErrorResumePublisher(source=source, fn=fn, when=when))

    def on_error_return(self, value: R, *, when: ErrorSelector | None = None) -> Flux[T_co | R]:
        """On an error selected by *when* (classes or a predicate; default all), emit *value* and complete."""
        return Flux(OnErrorReturnPublisher(source=self._source, value=value, when=when))

    def on_error_map(self, fn: Callable[[BaseException], BaseException]) -> Flux[T_co]:
        """Signal ``fn(error)`` instead of an upstream error."""
        return Flux(OnErrorMapPublisher(self._source, fn))

    def retry(
        self, max_attempts: int | None = None, *, when: ErrorSelector | None = None
    ) -> Flux[T_co]:
        """On an error selected by *when*, resubscribe, at most *max_attempts* times (None: always).

        Backpressure: only the demand still outstanding is requested again.
        """
        return Flux(RetryPublisher(source=self._source, max_attempts=max_attempts, when=when))

    def repeat(self, times: int | None = None) -> Flux[T_co]:
        """On completion resubscribe, *times* more times (``repeat(0)``: once; None: for ever).

        Backpressure: only the demand still outstanding is requested again.
        """
        return Flux(RepeatPublisher(self._source, times))

    def retry_when(
        self, companion: Callable[[Flux[BaseException]], Publisher[object]]
    ) -> Flux[T_co]:
        """On error resubscribe when ``companion(errors)`` emits; its end ends the stream.

        *companion* is called once per subscription with a `Flux` of the errors and asked for
        one item per error. A `Retry` spec (`Retry.max`, `Retry.backoff`) is such a companion.

        Backpressure: only the demand still outstanding is requested again.
        """
        return Flux(RetryWhenPublisher(self._source, companion, Flux))

    def repeat_when(self, companion: Callable[[Flux[int]], Publisher[object]]) -> Flux[T_co]:
        """On completion resubscribe when ``companion(rounds)`` emits; its end ends the stream.

        *companion* is called once per subscription with a `Flux` of the completed rounds
        (1, 2, …) and asked for one item per round.

        Backpressure: only the demand still outstanding is requested again.
        """
        return Flux(RepeatWhenPublisher(self._source, companion, Flux))

    # -- operators: flatten and combine ------------------------------------------------
    # (fn may return a Publisher, an async iterable or an awaitable: the returned object's
    # kind decides, see _operators/_as_publisher.py; delay_errors=True lets the other
    # sources finish before an error is signalled, several errors as one ExceptionGroup)

    def flat_map(
        self,
        fn: Callable[[T_co], Publisher[R] | AsyncIterable[R] | Awaitable[R]],
        *,
        concurrency: int = DEFAULT_CONCURRENCY,
        prefetch: int = INNER_PREFETCH,
        delay_errors: bool = False,
    ) -> Flux[R]:
        """Map each item to an inner stream and merge them as they emit (unordered).

        *fn* may return a publisher, an async iterable or an awaitable (one value): the kind
        of the returned object decides. ``delay_errors=True`` lets the rest finish first.

        Backpressure: at most *concurrency* inner streams at once, each prefetching *prefetch*.
        """
        return Flux(FlatMapPublisher(self._source, fn, concurrency, prefetch, delay_errors))

    def flat_map_sequential(
        self,
        fn: Callable[[T_co], Publisher[R] | AsyncIterable[R] | Awaitable[R]],
        *,
        concurrency: int = DEFAULT_CONCURRENCY,
        prefetch: int = INNER_PREFETCH,
        delay_errors: bool = False,
    ) -> Flux[R]:
        """Like `flat_map`, inner streams run concurrently, but emit in outer order.

        *fn* may return a publisher, an async iterable or an awaitable (one value).

        Backpressure: at most *concurrency* inner streams at once, each prefetching *prefetch*.
        """
        return Flux(
            FlatMapSequentialPublisher(self._source, fn, concurrency, prefetch, delay_errors)
        )

    def concat_map(
        self,
        fn: Callable[[T_co], Publisher[R] | AsyncIterable[R] | Awaitable[R]],
        *,
        prefetch: int = INNER_PREFETCH,
        delay_errors: bool = False,
    ) -> Flux[R]:
        """Map each item to an inner stream, played one after another, in order.

        *fn* may return a publisher, an async iterable or an awaitable (one value).

        Backpressure: one outer item at a time; the inner stream prefetches *prefetch*.
        """
        return Flux(ConcatMapPublisher(self._source, fn, 1, prefetch, delay_errors))

    @staticmethod
    def merge(
        *sources: Publisher[T],
        concurrency: int | None = None,
        prefetch: int = INNER_PREFETCH,
        delay_errors: bool = False,
    ) -> Flux[T]:
        """The items of all *sources* as they come.

        Backpressure: *concurrency* (default: all) sources at once, each prefetching *prefetch*.
        """
        return Flux(MergePublisher(_adopt_all(sources), concurrency, prefetch, delay_errors))

    def merge_with(self, other: Publisher[U], *, prefetch: int = INNER_PREFETCH) -> Flux[T_co | U]:
        """This stream's items and *other*'s, as they come. Backpressure: prefetch per source."""
        sources: tuple[Publisher[T_co | U], ...] = (self, adopt(other))
        return Flux(MergePublisher(sources, None, prefetch))

    @staticmethod
    def concat(
        *sources: Publisher[T], prefetch: int = INNER_PREFETCH, delay_errors: bool = False
    ) -> Flux[T]:
        """The items of *sources*, one source after the other.

        Backpressure: the current source prefetches *prefetch*.
        """
        return Flux(ConcatPublisher(_adopt_all(sources), prefetch, delay_errors))

    def concat_with(self, other: Publisher[U], *, prefetch: int = INNER_PREFETCH) -> Flux[T_co | U]:
        """This stream's items, then *other*'s. Backpressure: the current source prefetches."""
        sources: tuple[Publisher[T_co | U], ...] = (self, adopt(other))
        return Flux(ConcatPublisher(sources, prefetch))

    def switch_on_next(
        self: Flux[Publisher[R] | AsyncIterable[R] | Awaitable[R]],
        *,
        prefetch: int = INNER_PREFETCH,
    ) -> Flux[R]:
        """Play each inner stream the source emits until the next one arrives (cancelling it).

        Backpressure: as `switch_map`: the outer unbounded; the inner prefetches *prefetch*.
        """
        return Flux(SwitchMapPublisher(self._source, _same, prefetch))

    def filter_when(
        self,
        fn: Callable[[T_co], Publisher[object] | AsyncIterable[object] | Awaitable[object]],
        *,
        prefetch: int = INNER_PREFETCH,
    ) -> Flux[T_co]:
        """Keep an item when the first value of ``fn(item)`` (awaitable or stream) is truthy.

        Backpressure: one item at a time, in order, as `concat_map`.
        """
        return Flux(filter_when_publisher(self._source, fn, prefetch))

    def delay_until(
        self,
        fn: Callable[[T_co], Publisher[object] | AsyncIterable[object] | Awaitable[object]],
        *,
        prefetch: int = INNER_PREFETCH,
    ) -> Flux[T_co]:
        """Emit each item once the trigger ``fn(item)`` (awaitable or stream) has ended.

        Backpressure: one item at a time, in order, as `concat_map`.
        """
        return Flux(delay_until_publisher(self._source, fn, prefetch))

    def expand(
        self, fn: Callable[[T_co], Publisher[T] | AsyncIterable[T] | Awaitable[T]]
    ) -> Flux[T_co | T]:
        """The items and, breadth-first, the children ``fn`` makes of every item, recursively.

        Backpressure: one stream at a time, asked for the outstanding demand.
        """
        source: Publisher[Any] = self._source
        return Flux(ExpandPublisher(source, fn))

    def expand_deep(
        self,
        fn: Callable[[T_co], Publisher[T] | AsyncIterable[T] | Awaitable[T]],
        *,
        prefetch: int = INNER_PREFETCH,
    ) -> Flux[T_co | T]:
        """The items and, depth-first, the children ``fn`` makes of every item, recursively.

        Backpressure: one item per level at a time, as `concat_map`.
        """
        source: Publisher[Any] = self._source
        return Flux(ExpandDeepPublisher(source, fn, prefetch))

    def switch_on_first(
        self, fn: Callable[[Notification[T_co], Flux[T_co]], Publisher[R]]
    ) -> Flux[R]:
        """Continue with the stream ``fn(first, source)`` picks from the source's first signal.

        *first* is that signal (a `Notification`), *source* a one-subscriber `Flux` of the
        source's items from the first on.

        Backpressure: the returned stream's; the source is asked for one item, then prefetches.
        """
        return Flux(SwitchOnFirstPublisher(self._source, fn, Flux))

    def switch_map(
        self,
        fn: Callable[[T_co], Publisher[R] | AsyncIterable[R] | Awaitable[R]],
        *,
        prefetch: int = INNER_PREFETCH,
    ) -> Flux[R]:
        """Map each item to an inner stream; a new item cancels the previous inner stream.

        *fn* may return a publisher, an async iterable or an awaitable (one value).

        Backpressure: unbounded-in for the outer source; the inner prefetches *prefetch*.
        """
        return Flux(SwitchMapPublisher(self._source, fn, prefetch))

    @overload
    @staticmethod
    def zip(
        s1: Publisher[T1], s2: Publisher[T2], /, *, prefetch: int = ...
    ) -> Flux[tuple[T1, T2]]: ...

    @overload
    @staticmethod
    def zip(
        s1: Publisher[T1], s2: Publisher[T2], s3: Publisher[T3], /, *, prefetch: int = ...
    ) -> Flux[tuple[T1, T2, T3]]: ...

    @overload
    @staticmethod
    def zip(
        s1: Publisher[T1],
        s2: Publisher[T2],
        s3: Publisher[T3],
        s4: Publisher[T4],
        /,
        *,
        prefetch: int = ...,
    ) -> Flux[tuple[T1, T2, T3, T4]]: ...

    @overload
    @staticmethod
    def zip(*sources: Publisher[Any], prefetch: int = ...) -> Flux[tuple[Any, ...]]: ...

    @staticmethod
    def zip(*sources: Publisher[Any], prefetch: int = INNER_PREFETCH) -> Flux[tuple[Any, ...]]:
        """Tuples of the n-th item of every source; completes when any source runs out.

        Backpressure: every source prefetches *prefetch*, re-requested in batches.
        """
        return Flux(ZipPublisher(_adopt_all(sources), prefetch))

    def zip_with(
        self, other: Publisher[U], *, prefetch: int = INNER_PREFETCH
    ) -> Flux[tuple[T_co, U]]:
        """Pairs of this stream's n-th item and *other*'s. Backpressure: prefetch per source."""
        return Flux(ZipPublisher((self._source, adopt(other)), prefetch))

    @overload
    @staticmethod
    def combine_latest(
        s1: Publisher[T1], s2: Publisher[T2], /, *, prefetch: int = ...
    ) -> Flux[tuple[T1, T2]]: ...

    @overload
    @staticmethod
    def combine_latest(
        s1: Publisher[T1], s2: Publisher[T2], s3: Publisher[T3], /, *, prefetch: int = ...
    ) -> Flux[tuple[T1, T2, T3]]: ...

    @overload
    @staticmethod
    def combine_latest(*sources: Publisher[Any], prefetch: int = ...) -> Flux[tuple[Any, ...]]: ...

    @staticmethod
    def combine_latest(
        *sources: Publisher[Any], prefetch: int = INNER_PREFETCH
    ) -> Flux[tuple[Any, ...]]:
        """A tuple of every source's latest item whenever any source emits (once all have).

        Backpressure: every source prefetches *prefetch*, re-requested in batches.
        """
        return Flux(CombineLatestPublisher(_adopt_all(sources), prefetch))

    def with_latest_from(self, other: Publisher[U]) -> Flux[tuple[T_co, U]]:
        """Pair each item with *other*'s latest item; items before *other* has one are dropped.

        Backpressure: pass-through; *other* is requested unbounded.
        """
        return Flux(WithLatestFromPublisher(self._source, adopt(other)))

    @staticmethod
    def race(*sources: Publisher[T], prefetch: int = INNER_PREFETCH) -> Flux[T]:
        """Mirror the first source to signal; the others are cancelled.

        Backpressure: every source prefetches *prefetch* until one wins.
        """
        return Flux(RacePublisher(_adopt_all(sources), prefetch))

    def map_in_thread(
        self, fn: Callable[[T_co], R], *, concurrency: int = 1, ordered: bool = True
    ) -> Flux[R]:
        """Apply blocking *fn* in worker threads, *concurrency* at a time.

        Backpressure: at most ``min(concurrency, demand)`` items in flight.
        Loop: needs a running loop; threads via ``anyio.to_thread.run_sync``.
        """
        return Flux(MapInThreadPublisher(self._source, fn, concurrency, ordered))

    # -- operators: boundaries, demand shaping, backpressure, sharing --------------------

    def publish_on(self, *, buffer_size: int = 256) -> Flux[T_co]:
        """Deliver downstream from a drain on the loop. Backpressure: buffer(buffer_size)."""
        return Flux(PublishOnPublisher(self._source, buffer_size))

    def batch(self, max_items: int = 256) -> Flux[list[T_co]]:
        """Lists of what arrived while downstream was busy, never waiting for one to fill.

        Backpressure: at most *max_items* held; one list per requested item.
        """
        return Flux(BatchPublisher(self._source, max_items))

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

    def share(self, *, buffer_size: int = 256) -> Flux[T_co]:
        """One upstream subscription for all current subscribers (multicast + ref-count).

        Backpressure: prefetch(buffer_size), lockstep: the slowest subscriber sets the pace.
        """
        return Flux(share(self._source, buffer_size))

    def publish(self, *, buffer_size: int = 256) -> ConnectableFlux[T_co, Flux[T_co]]:
        """A `ConnectableFlux` multicasting in lockstep once ``connect()`` is called."""
        return publish(self._source, buffer_size, Flux[T_co])

    def replay(
        self, history: int | None = None, *, ttl: float | None = None
    ) -> ConnectableFlux[T_co, Flux[T_co]]:
        """A `ConnectableFlux` replaying the last *history* items (younger than *ttl* s)."""
        return replay(self._source, history, ttl, Flux[T_co])

    # -- operators: time ----------------------------------------------------------------

    def delay_subscription(self, delay: float) -> Flux[T_co]:
        """Subscribe upstream only after *delay* seconds. Backpressure: accumulated, then pass-through."""
        return Flux(DelaySubscriptionPublisher(self._source, delay))

    def delay_elements(self, delay: float) -> Flux[T_co]:
        """Emit each item *delay* seconds after it arrived. Backpressure: one item at a time."""
        return Flux(DelayElementsPublisher(self._source, delay))

    def delay(self, delay: float) -> Flux[T_co]:
        """Shift every signal *delay* seconds later, keeping the spacing. Backpressure: pass-through."""
        return Flux(DelayPublisher(self._source, delay))

    @overload
    def debounce(self, timeout: float) -> Flux[T_co]: ...

    @overload
    def debounce(self, selector: Callable[[T_co], Publisher[object]], /) -> Flux[T_co]: ...

    def debounce(self, timeout: float | Callable[[T_co], Publisher[object]]) -> Flux[T_co]:
        """Emit an item once a quiet period passed without a newer one. Backpressure: drops.

        The period is *timeout* seconds, or, given a *selector*, lasts until ``selector(item)``
        emits or completes.
        """
        if callable(timeout):
            return Flux(DebounceSelectorPublisher(self._source, timeout))
        return Flux(DebouncePublisher(self._source, timeout))

    def throttle_first(self, window: float) -> Flux[T_co]:
        """Emit an item, then drop items for *window* seconds. Backpressure: drops."""
        return Flux(ThrottleFirstPublisher(self._source, window))

    @overload
    def sample(self, period: float) -> Flux[T_co]: ...

    @overload
    def sample(self, sampler: Publisher[object], /) -> Flux[T_co]: ...

    def sample(self, period: float | Publisher[object]) -> Flux[T_co]:
        """The latest item since the previous sample, if any. Backpressure: drops.

        A sample is taken every *period* seconds, or at each item of a *sampler* publisher.
        """
        if isinstance(period, (int, float)):
            return Flux(SamplePublisher(self._source, period))
        return Flux(SamplerPublisher(self._source, period))

    def throttle_last(self, period: float) -> Flux[T_co]:
        """The same as `sample`: the latest item of every *period*."""
        return Flux(SamplePublisher(self._source, period))

    def timeout(self, seconds: float, *, fallback: Publisher[R] | None = None) -> Flux[T_co | R]:
        """Fail with `TimeoutError`, or switch to *fallback*, when an item takes over *seconds*."""
        source: Publisher[T_co | R] = self._source
        return Flux(
            TimeoutPublisher(source, seconds, None if fallback is None else adopt(fallback))
        )

    def buffer_timeout(self, max_size: int, max_time: float) -> Flux[list[T_co]]:
        """Lists of up to *max_size* items, cut when full or *max_time* after their first item.

        Backpressure: asks upstream for ``n * max_size``; due batches are held, never dropped.
        """
        return Flux(BufferTimeoutPublisher(self._source, max_size, max_time))

    def window_timeout(self, max_size: int, max_time: float) -> Flux[Flux[T_co]]:
        """Windows of up to *max_size* items, closed when full or *max_time* after they opened.

        Backpressure: asks upstream for ``n * max_size``; windows due without demand are held.
        """
        return Flux(WindowTimeoutPublisher(self._source, max_size, max_time, Flux))

    def elapsed(self) -> Flux[tuple[float, T_co]]:
        """``(seconds since the previous item, item)``; the first since subscription. The
        clock is the event loop's ``loop.time()`` (monotonic). Backpressure: pass-through."""
        return Flux(ElapsedPublisher(self._source, since_previous=True))

    def timestamp(self) -> Flux[tuple[float, T_co]]:
        """``(loop.time(), item)``: the event loop's monotonic clock, not the wall clock.

        Backpressure: pass-through.
        """
        return Flux(ElapsedPublisher(self._source, since_previous=False))

    def take_for(self, duration: float) -> Flux[T_co]:
        """The items of the first *duration* seconds, then completion (``take(n)`` counts)."""
        return Flux(TakeForPublisher(self._source, duration))

    def skip_for(self, duration: float) -> Flux[T_co]:
        """Drop the items of the first *duration* seconds. Backpressure: drops re-requested."""
        return Flux(SkipForPublisher(self._source, duration))

    def retry_backoff(
        self,
        max_attempts: int,
        *,
        first_backoff: float,
        max_backoff: float,
        jitter: float = 0.5,
    ) -> Flux[T_co]:
        """On error resubscribe, up to *max_attempts* times, after exponential jittered pauses.

        The shorthand for ``retry_when(Retry.backoff(...))`` (see `Retry`).
        """
        spec = Retry.backoff(max_attempts, first_backoff, max_backoff=max_backoff, jitter=jitter)
        return self.retry_when(spec)

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

    async def count(self) -> int:
        """How many items the stream has."""
        return await collect_count(self._source)

    async def all(self, predicate: Callable[[T_co], object]) -> bool:
        """Whether *predicate* holds for every item (True if empty); stops at the first failure."""
        return await collect_all(self._source, predicate)

    async def any(self, predicate: Callable[[T_co], object]) -> bool:
        """Whether *predicate* holds for some item; stops at the first that passes."""
        return await collect_any(self._source, predicate)

    async def contains(self, value: object) -> bool:
        """Whether an item equals *value*; stops at the first that does."""
        return await collect_contains(self._source, value)

    async def is_empty(self) -> bool:
        """Whether the stream completes without items; asks for one item and cancels after it."""
        return await collect_is_empty(self._source)

    @overload
    async def to_dict(self, key: Callable[[T_co], K]) -> dict[K, T_co]: ...

    @overload
    async def to_dict(self, key: Callable[[T_co], K], value: Callable[[T_co], V]) -> dict[K, V]: ...

    async def to_dict(
        self, key: Callable[[T_co], Any], value: Callable[[T_co], Any] | None = None
    ) -> dict[Any, Any]:
        """``{key(item): value(item)}`` (the item without *value*); the last item per key wins."""
        return await collect_dict(self._source, key, value)

    @overload
    async def to_multidict(self, key: Callable[[T_co], K]) -> dict[K, list[T_co]]: ...

    @overload
    async def to_multidict(
        self, key: Callable[[T_co], K], value: Callable[[T_co], V]
    ) -> dict[K, list[V]]: ...

    async def to_multidict(
        self, key: Callable[[T_co], Any], value: Callable[[T_co], Any] | None = None
    ) -> dict[Any, list[Any]]:
        """``{key: [value(item), …]}`` (the items without *value*), in stream order."""
        return await collect_multidict(self._source, key, value)

    async def to_sorted_list(
        self, key: Callable[[T_co], Any] | None = None, *, reverse: bool = False
    ) -> list[T_co]:
        """All items, sorted as `sorted` sorts them (stable), once the stream completed."""
        return await collect_sorted_list(self._source, key, reverse)

    def __aiter__(self) -> AsyncIterator[T_co]:
        return self.iterate()

    def iterate(self, *, prefetch: int = DEFAULT_PREFETCH) -> AsyncGenerator[T_co, None]:
        """An async iterator with a *prefetch* demand window (``aclose()`` cancels).

        Over `from_async_iterable` and maps and filters after it, the reader's own task reads
        the async iterable and runs the stages inline: nothing is read ahead (*prefetch* has
        nothing to bound), and leaving early closes the iterable as a cancel does. Over
        `batch` right after `publish_on` (or over ``range``, ``from_iterable`` and maps), the
        lists are slices of the one buffer the reader holds, bounded by the boundary's
        ``buffer_size`` (or the batch's size) rather than by *prefetch*."""
        if prefetch <= 0:
            raise ValueError(f"prefetch must be > 0, got {prefetch}")
        source = self._source
        items = iterate_awaiting(source)
        if items is None:
            items = iterate_batches(source)
        return to_async_iterator(self, prefetch=prefetch) if items is None else items


def _assembly_of(flux: Flux[Any]) -> Assembly | None:
    return getattr(flux, "_assembly", None)


def _recorded(method: Callable[..., Any]) -> Callable[..., Any]:
    """*method*, recording where it is called on the flux it returns (see `Assembly`): the
    traces that ``checkpoint`` notes are made of. Once per operator call, never per item."""
    name = method.__name__

    @functools.wraps(method)
    def operator(self: Flux[Any], *args: Any, **kwargs: Any) -> Any:
        flux = method(self, *args, **kwargs)
        if type(flux) is Flux:  # (a nested call, retry_backoff's retry_when, is overwritten)
            arguments = (*args, *kwargs.values()) if kwargs else args
            assembly = Assembly.record(name, arguments, _assembly_of(self))
            object.__setattr__(flux, "_assembly", assembly)
        return flux

    return operator


# Every operator, a method that returns a new flux (its annotation says so), records its calls;
# the sources, static methods, record nothing (no upstream, and flat_map makes one per item),
# and pipe only calls operators that do.
for _name, _method in list(vars(Flux).items()):
    _returns = str(getattr(_method, "__annotations__", {}).get("return"))
    if isinstance(_method, FunctionType) and _returns.startswith("Flux[") and _name != "pipe":
        setattr(Flux, _name, _recorded(_method))
