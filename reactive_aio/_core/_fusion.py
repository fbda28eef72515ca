"""Fusion: synchronous stages run inside their source's loop, in one place.

Most of what a stream costs per item is the machinery between stages: a subscriber, a
signal, a demand count. Fusion takes it away where the stages allow (Reactor's ``Fuseable``):

* **Macro-fusion.** ``flux.map(f).filter(p).map(g)`` assembles into one `FusedPublisher`
  holding the three stages, so an item crosses one subscriber (`FusedSubscriber`) instead of
  three.
* **Micro-fusion.** A `FusableSource` (``range``, ``from_iterable``, ``just``) runs the stages
  inside its own emit loop (`IteratorSubscription`), and counts only the kept items against
  demand: a dropped item costs no ``request`` at all, only its share of the drain's yield to
  the loop (`DROPS_PER_ITEM`). Behind any other source the `FusedSubscriber` re-requests drops
  in batches.
* **Pulled inners.** A `SyncSource` (the fusable sources, and a fused chain over one) can hand
  its items over as an iterator. An operator that flattens inner streams (``flat_map`` and
  the operators built on it, ``switch_map``, ``flat_map_iterable``) wraps it in a `SyncInner`
  and pulls it inside its own drain with `SyncInner.pull`: no inner subscriber, subscription,
  queue or re-request, which is what most of the cost of a short inner stream is.
* **Fold fusion.** A terminal fold (``to_list``, ``last``, ``reduce``) over a fused chain runs
  inside the chain's own loop (`fold_at_hand`).
* **Awaiting sources.** An `AsyncSource` (``from_async_iterable``) reads an async iterator.
  A subscriber, or a fused chain, is served by an `AwaitingSubscription` whose task reads it
  only within demand and runs the stages inline; a fold or an ``async for`` over it (and
  over the maps and filters after it) subscribes nothing: the awaiting task reads the
  iterator in one generated ``async for`` loop with the stages inline (`fold_at_hand`,
  `iterate_awaiting`), as a hand-written loop would.
* **Awaited calls.** ``map_async`` with one call at a time over a source at hand is an
  `AwaitingSource`: its items are `AwaitedCalls`, ``await call(x)`` for each item *x* the
  loop pulls from the source's iterator itself. A fold over it (and over the maps and filters
  after it) awaits the calls in the awaiting task's own generated loop; a subscriber is
  served by an `AwaitingSubscription` whose task does (`serve_calls`).
* **Async fusion.** An async boundary (``publish_on``) lets a subscriber that is an async
  boundary itself (an `AsyncBoundarySubscriber`, such as the buffer behind ``async for``) take
  its place (`fuse_boundary`), so that items cross one buffer instead of two; a source at hand
  fills that buffer a request at a time (`PulledSubscription`), and a ``batch`` right after the
  boundary becomes slices of it (`Batching`).
* **Pulled subscribers.** A subscriber that can take a list of items in one call (an
  `ItemsSubscriber`: the buffer behind ``async for``, a connector's sink), subscribed with
  ``Flux.subscribe`` to a source at hand, pulls each request from its iterator into one list
  (`subscribe_pulled`, a `PulledSubscription`): no ``on_next`` per item.

The stages run as straight-line code, one call per user function, generated and compiled
once per shape of chain (True for a map, False for a filter) by `compile_stages`: a loop over
the stages would cost about as much per item as the functions themselves. To see it,
`fusion_source` returns the code generated for a chain, and tracebacks through it show its
lines: each generated function is registered with `linecache` under a file name that says
what it is, such as ``<reactive_aio fusion: emit loop, shape (True, False)>``.

Backpressure: a fused chain passes demand through; a dropped item is not counted against
demand inside a fused source (an `AwaitingSubscription` too, which reads its iterator only
while there is demand), and is re-requested in batches (once drops are as many as the
items still in flight) behind any other source, unless demand is unbounded. A `SyncInner` is
pulled only for the items emitted, plus one looked ahead when a pass stops at its limit (to
learn of the end without more demand).
Errors: each stage keeps the behaviour of its operator module (``_map``, ``_filter``): the
same null check (rule 2.13); a raising function cancels upstream first and then signals
``on_error``; in-flight items after a cancel go nowhere (rule 2.8). A source's None item
fails the stream naming its position (rule 2.13); what a source's iterator raises fails it.
An awaiting loop over an async source closes its iterator however it ends, and fails the
stream with `cancelled_elsewhere` on a CancelledError that is not its task's cancellation.

API
---
`SyncSource`
    A mixin for a `Publisher` that may offer ``sync_iterator()``: a fresh iterator over what a
    subscriber would get, or ``None`` when its items are not at hand (the caller subscribes);
    ``sync_inner(owner)``: that iterator as a `SyncInner` of *owner*'s drain; and
    ``fused_chain()``: the `FusedPublisher` it is, if any.
`Transparent`
    A mixin for a stage that passes every signal through unchanged and only labels the stream
    (``name``, ``tag``): ``source``, and ``over(source)``, the same stage over another source.
    Fusion sees through it: `fuse` moves it behind a map or filter that follows it (so the
    stages before and after it stay one fused chain), the fold and ``async for`` paths look
    past it, and its items are at hand when its source's are.
`FusableSource`
    A `SyncSource` that also runs a fused chain in its own emit loop: ``subscribe_fused(chain)``
    (an `IteratorSubscription` serves both); ``sync_range()``: its items as a ``range`` when
    they are one (a fold steps through its slices, no islice or count per item);
    ``sync_list()``: its items as the list they are (a `PulledSubscription` slices it).
`AsyncSource`
    A `FusableSource` whose items come from ``async_iterator()`` (which raises what a
    subscriber would get as ``on_error``, such as the one-shot rule's error): it subscribes
    a subscriber or a fused chain with an `AwaitingSubscription`, which emits from a task of
    its own that reads the iterator while there is demand; `close_async_iterator` closes an
    iterator that has ``aclose``.
`AwaitingSource`, `AwaitedCalls`, `serve_calls` ``(subscriber, calls)``
    A mixin for a publisher whose items may be ``await call(x)`` over a source at hand, one
    call at a time: ``awaited_calls()`` claims them (``None`` when they are not at hand: the
    caller subscribes); `serve_calls` serves a subscriber with them from one task, within
    demand. `AwaitedCalls` names the operator in the errors its calls cause (a None result,
    rule 2.13, by `null_result_error`; a CancelledError from elsewhere).
`iterate_awaiting` ``(source)``
    What ``async for`` over an `AsyncSource`, or a fused chain over one, reads: an async
    generator that reads the iterator in the reader's task and runs the stages inline
    (nothing read ahead; closing it closes the iterator); ``None`` for any other source.
`SyncInner` ``(owner, iterator)``
    A `SyncSource`'s iterator pulled by its owner's drain. `SyncInner.pull` ``(drain, limit)``
    emits up to *limit* items to *drain*'s subscriber and returns how many; ``done`` turns true
    once nothing more will come (ended, failed with ``error``, or cancelled). What the iterator
    raises, and a ``None`` item (rule 2.13, named by position), goes to ``owner.inner_error``,
    as a subscribed source's ``on_error`` would. When a pass stops at its limit, one item is
    looked ahead (when the iterator cannot tell its length) so that the owner learns of the
    end without waiting for more demand; an owner that needs to know only at the very end
    passes ``ahead=False`` and calls ``look_ahead`` itself. The iterator of a source that
    drops items (a fused filter) yields None in place of every pass's worth of items it
    dropped (``DROPS_PER_ITEM * DRAIN_BATCH``, ``skips=True``): the pull counts them as a pass,
    so an inner that drops long runs, or everything, cannot hold the loop.
`exact_length` ``(iterator)``
    The items left in an iterator of a builtin sequence (a range, list, tuple, str, bytes or
    bytearray), ``-1`` for any other: PEP 424 lets ``__length_hint__`` guess, so only these
    hints may end a stream; any other iterator ends when it raises StopIteration (a dict's
    or a set's hint drops to 0 when it changes size, before its iterator raises).
`items_at_hand` ``(source)``
    The items of a `SyncSource` (through its fused maps) as an iterator a reader pulls
    directly, such as the buffer behind ``async for`` and the web adapters' writers; ``None``
    when they are not at hand or a stage may drop items.
`fold_at_hand` ``(source, step, seed)``
    What ``to_list``, ``last`` and ``reduce`` await over a `FusableSource` (an `AsyncSource`
    too), an `AwaitingSource` whose calls are at hand, or a fused chain over one: the fold
    runs inside one generated loop (the stages, then ``step``), with no subscriber and no
    ``on_next`` per item; ``None`` for any other source.
`compile_stages` ``(name, shape, code, **names)``
    The one place generated code is compiled (see `stage_lines` for the stages' lines).
`fusion_source` ``(publisher)``
    The code generated so far for *publisher*'s fused chain, for debugging.
`AsyncBoundary`, `AsyncBoundarySubscriber`, `fuse_boundary`, `DeferredSubscription`
    Async fusion (see `fuse_boundary`): the boundary publisher (marked `AsyncBoundary`) calls
    `fuse_boundary` from its ``subscribe``; an `AsyncBoundarySubscriber` that accepts is
    subscribed to the boundary's source directly, takes over the boundary's prefetch
    (*prefetch* items asked for up front, *replenish* more each time that many were taken) and
    sends its requests through a `DeferredSubscription`, which makes them from a loop
    callback: upstream emits where the boundary's drain ran, never on the reader's stack, and
    the reader gives the loop a turn at least once per batch. When the source's items are at
    hand (`items_at_hand`), its subscription is a `PulledSubscription` (`subscribe_pulled`).
`ItemsSubscriber`, `subscribe_pulled` ``(subscriber, source)``, `PulledSubscription`
    A subscriber that takes several items in one `ItemsSubscriber.on_items` call (the base
    of `AsyncBoundarySubscriber`). `subscribe_pulled` subscribes it to a source whose items
    are at hand with a `PulledSubscription`: a request pulls that many items from the
    iterator (a `DRAIN_BATCH` per loop turn) and hands them over in one ``on_items`` call,
    no ``on_next`` per item; it returns False, doing nothing, for any other source.
    ``Flux.subscribe`` does that for every `ItemsSubscriber`.
`Batching`
    A mixin for a publisher whose items are lists of its source's items, each what was
    buffered when it was taken, never waiting for one to fill (``batch``): ``batched()`` gives
    the source and the most items a list holds. A reader that buffers the source's items
    itself (the buffer behind ``async for``, after an `AsyncBoundary` or over items at hand)
    hands out slices of its buffer instead of subscribing to the batching publisher.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import linecache
from collections import deque
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Awaitable,
    Callable,
    Coroutine,
    Iterable,
    Iterator,
    Sequence,
)
from itertools import chain, islice, repeat
from operator import is_, length_hint
from time import perf_counter
from typing import Any, Generic, NoReturn, Protocol, TypeVar, final

import attrs

from ._cancellation import cancelled_elsewhere, cancelling_this_task
from ._checks import request_error, require_not_none
from ._demand import MAX_DEMAND, add_demand, produced
from ._drain import DRAIN_BATCH, DROPS_PER_ITEM, DrainSubscription
from ._exceptions import NullSignalError, short_repr, stream_error
from ._loop import current_loop, hand_over
from ._operator import OperatorSubscriber
from ._report import raising_subscriber, report_error
from ._scan import StageScan, StageState, operator_name, scan_of, stage_state
from ._spec import Publisher, Subscriber, Subscription

__all__ = (
    "FOLD_TURN",
    "GENERATED",
    "AsyncBoundary",
    "AsyncBoundarySubscriber",
    "AsyncSource",
    "AwaitedCalls",
    "AwaitingSource",
    "AwaitingSubscription",
    "Batching",
    "DeferredSubscription",
    "FusableSource",
    "FusedPublisher",
    "FusedSubscriber",
    "ItemsSubscriber",
    "IteratorSubscription",
    "PulledSubscription",
    "SyncInner",
    "SyncOwner",
    "SyncSource",
    "Transparent",
    "close_async_iterator",
    "exact_length",
    "fold_at_hand",
    "fuse",
    "fuse_boundary",
    "fusion_source",
    "items_at_hand",
    "iterate_awaiting",
    "null_item_error",
    "null_result_error",
    "serve_calls",
    "subscribe_pulled",
)

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)
R = TypeVar("R")
A = TypeVar("A")

Stage = tuple[bool, Callable[[Any], Any]]
"""``(True, fn)`` maps every item with *fn*; ``(False, predicate)`` keeps the items it holds for."""

_END: Any = object()


# -- what a source at hand offers ---------------------------------------------------------

_SEQUENCES: tuple[Iterable[Any], ...] = (
    range(0),
    range(2**64),  # a range beyond a C long has an iterator type of its own
    [],
    reversed([]),
    (),
    "",
    "\u20ac",  # str iterators differ by the width of the characters on some versions
    b"",
    bytearray(),
)
_EXACT: frozenset[type] = frozenset(type(iter(sequence)) for sequence in _SEQUENCES)
"""Iterator types whose length hint is the exact count of the items left."""


def exact_length(iterator: Iterator[Any]) -> int:
    """The items left in *iterator* when it iterates a builtin sequence, else ``-1``."""
    return length_hint(iterator) if type(iterator) in _EXACT else -1


AWAITED_NULL = "rule 2.13: the async iterable yielded None"
"""The message of the error an async source fails with on a None item."""


def null_item_error(position: int) -> NullSignalError:
    """Rule 2.13 for a synchronous source whose item number *position* (from 0) is None."""
    return NullSignalError(f"rule 2.13: item #{position} of the iterable is None")


class SyncSource(Generic[T_co]):
    """A publisher that may hand over its items as an iterator instead of emitting them.

    A mixin beside `Publisher` (not a protocol: ``isinstance`` against it costs no Python call).
    """

    __slots__ = ()

    def sync_iterator(self) -> Iterator[T_co] | None:
        """A fresh iterator over the items a subscriber would get, or ``None`` when they are
        not at hand. Must not raise: a source that cannot start returns ``None`` and reports
        its failure to a subscriber. What the iterator raises is the source's failure."""
        return None

    def sync_inner(self, owner: SyncOwner) -> SyncInner[T_co] | None:
        """`sync_iterator` as an inner of *owner*'s drain, or ``None`` when the items are not
        at hand. A source that drops items overrides it to mark its drops (``skips``)."""
        iterator = self.sync_iterator()
        return None if iterator is None else SyncInner(owner, iterator)

    def fused_chain(self) -> FusedPublisher[Any] | None:
        """The fused chain of maps and filters this publisher is, if any (see `fusion_source`)."""
        return None


class Transparent(SyncSource[T_co]):
    """A stage that passes every signal through unchanged and only labels the stream: fusion
    sees through it (see `fuse`, `_parts`), and it offers its source's items as its own."""

    __slots__ = ()

    source: Publisher[T_co]

    def over(self, source: Publisher[Any]) -> Publisher[Any]:
        """This stage over *source* instead (what `fuse` moves behind a new stage)."""
        raise NotImplementedError

    def sync_iterator(self) -> Iterator[T_co] | None:
        source = self.source
        return source.sync_iterator() if isinstance(source, SyncSource) else None

    def sync_inner(self, owner: SyncOwner) -> SyncInner[T_co] | None:
        source = self.source
        return source.sync_inner(owner) if isinstance(source, SyncSource) else None

    def fused_chain(self) -> FusedPublisher[Any] | None:
        source = self.source
        return source.fused_chain() if isinstance(source, SyncSource) else None


class FusableSource(Publisher[T], SyncSource[T]):
    """A source that runs a fused chain inside its own emit loop, and hands its items over as
    an iterator."""

    __slots__ = ()

    def subscribe_fused(self, chain: FusedSubscriber) -> None:
        """Subscribe *chain*, running its stages on every item before passing it on; a dropped
        item does not count against demand."""
        raise NotImplementedError

    def sync_range(self) -> range | None:
        """The items as a ``range`` when they are one, else ``None``: a fold steps through it a
        slice at a time, with nothing between the slice's items and the stages."""
        return None

    def sync_list(self) -> list[T] | None:
        """The items as the list they are, else ``None`` (``from_iterable`` over a list): a
        `PulledSubscription` slices it, with no Python step per item."""
        return None


class AsyncSource(FusableSource[T]):
    """A source whose items come from an async iterator: a subscriber, or a fused chain, is
    served by an `AwaitingSubscription` whose task reads the iterator and runs the stages
    inline; a fold or an ``async for`` reads it in the awaiting task itself (`fold_at_hand`,
    `iterate_awaiting`). Its items are never at hand (``sync_iterator()`` is None)."""

    __slots__ = ()

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self._serve(subscriber, None)

    def subscribe_fused(self, chain: FusedSubscriber) -> None:
        self._serve(chain, chain)

    def _serve(self, subscriber: Subscriber[Any], chain: FusedSubscriber | None) -> None:
        subscription = AwaitingSubscription[Any](subscriber, chain=chain)
        if subscription._loop is None:
            subscription.fault = RuntimeError(f"{type(self).__name__} needs a running event loop")
        else:
            try:
                subscription.iterator, subscription.batched = _claim(self, subscription.uncovered)
            except Exception as exc:
                subscription.fault = exc
        subscription.start()

    def async_iterator(self) -> AsyncIterator[T]:
        """The async iterator a subscriber would be served from, claimed for one reader (a
        source that reads batches, `async_batches`, need not implement it).

        Raises:
            Exception: what a subscriber would get as ``on_error`` instead (the iterable
                refused ``aiter()``, or a one-shot iterator was read already).
        """
        raise NotImplementedError

    def async_batches(self, want: Callable[[], int]) -> AsyncIterator[Sequence[T]] | None:
        """The items as an async iterator of batches, claimed for one reader, or ``None``: they
        come one at a time from `async_iterator`.

        Each batch holds at most ``want()`` items, called as it is read: the reader's demand
        not covered by items in hand, `MAX_DEMAND` for a fold or an ``async for``; a source
        bounds it further by its own largest batch. An empty batch means none yet; no batch
        holds None (rule 2.13: the source checks what may be None, and raises). A subscriber
        is served from a task started at ``subscribe``, whose first read wants 0: the source
        prepares (connects, opens) and returns an empty batch, so that a source that cannot
        start fails the stream without demand.

        Raises:
            Exception: as `async_iterator`.
        """
        return None


def _unbounded() -> int:
    return MAX_DEMAND


def _claim(
    source: AsyncSource[Any], want: Callable[[], int] = _unbounded
) -> tuple[AsyncIterator[Any], bool]:
    """*source*'s batches sized by *want* when it reads batches, else its items; and which."""
    batches = source.async_batches(want)
    return (source.async_iterator(), False) if batches is None else (batches, True)


async def close_async_iterator(iterator: AsyncIterator[object]) -> None:
    """Close *iterator* if it has ``aclose`` (async generators and most async iterators)."""
    aclose = getattr(iterator, "aclose", None)
    if aclose is not None:
        result = aclose()
        if inspect.isawaitable(result):
            await result


@final
@attrs.frozen
class AwaitedCalls(Generic[T_co]):
    """Items made by awaiting ``call(x)`` for each item *x* of *items* (a synchronous
    source's, at hand), one call at a time: what an awaiting loop reads in place of an async
    iterator. *name* is the operator's, for the errors the calls cause."""

    items: Iterator[Any]
    call: Callable[[Any], Awaitable[T_co]]
    name: str

    def null_error(self, item: object) -> NullSignalError:
        """Rule 2.13: the call for *item* returned None."""
        return null_result_error(f"{self.name}'s function", item)

    def cancelled_error(self, cause: BaseException) -> RuntimeError:
        """A call raised CancelledError while the stream was not cancelled."""
        return cancelled_elsewhere(f"{self.name}'s function", cause)


class AwaitingSource(Generic[T_co]):
    """A mixin for a publisher whose items may be `AwaitedCalls` (``map_async`` with one call
    at a time, over a source at hand): a fold over it awaits the calls inside its own loop in
    the awaiting task (`fold_at_hand`), as a hand-written loop would, and a subscriber is
    served by an `AwaitingSubscription` whose task does (`serve_calls`). A call is made only
    for an item that is asked for, and a call that never suspends costs no task switch."""

    __slots__ = ()

    def awaited_calls(self) -> AwaitedCalls[T_co] | None:
        """The calls, claimed for one reader (the source's iterator is taken), or ``None`` when
        they are not at hand (the caller subscribes)."""
        return None


def serve_calls(subscriber: Subscriber[T], calls: AwaitedCalls[T]) -> None:
    """Subscribe *subscriber* to *calls*, served by an `AwaitingSubscription`: one task, started
    at the first request, awaits the calls while there is demand and hands each result on."""
    subscription = AwaitingSubscription[T](subscriber)
    if subscription._loop is None:
        subscription.fault = RuntimeError(f"{calls.name} needs a running event loop")
    else:
        subscription.iterator = calls
    subscription.start()


# -- the stage compiler -------------------------------------------------------------------

_GENERATED: dict[str, str] = {}
"""The code of every factory `compile_stages` made, by file name (for `fusion_source`)."""

GENERATED = "<reactive_aio fusion: "
"""How the file names of generated code begin (tracebacks show them)."""


def stage_lines(
    shape: tuple[bool, ...], *, drop: list[str], stop: str, caught: bool = True
) -> tuple[list[str], str]:
    """Code that runs the stages ``fn0``, ``fn1``, … of *shape* on ``item`` for ``chain`` (a
    `FusedSubscriber`, or what stands for one): the lines *drop* run when a filter drops the
    item, *stop* after a stage failed the stream. Returns the lines (none for no stages) and
    the name that holds the item they pass on: each map's result gets a name of its own
    (``v0``, ``v1``, …), so that nothing is copied back into ``item``. Not *caught*: a stage's
    error propagates as it is (for a plain function whose caller fails the stream with it; a
    ``try`` per item costs a plain loop ~2%), and ``chain.null`` must raise."""
    if not shape:
        return [], "item"
    lines = ["try:"] if caught else []
    indent = "    " if caught else ""
    current = "item"
    for i, is_map in enumerate(shape):
        if is_map:
            lines += [
                f"{indent}v{i} = fn{i}({current})",
                f"{indent}if v{i} is None:",
                f"{indent}    chain.null({current})",
                *([f"{indent}    {stop}"] if caught else []),
            ]
            current = f"v{i}"
        else:
            lines += [
                f"{indent}if not fn{i}({current}):",
                *(f"{indent}    {line}" for line in drop),
            ]
    if caught:
        lines += ["except Exception as exc:", "    chain.stage_failed(exc)", f"    {stop}"]
    return lines, current


def compile_stages(
    name: str, shape: tuple[bool, ...], code: list[str], **names: object
) -> Callable[..., Any]:
    """Compile ``def make(chain, fns): …`` with ``fn0``, ``fn1``, … unpacked from ``fns`` (one
    per stage of *shape*) and *code* after them, which returns the function made; return
    ``make``. The code sees *names* as globals. Its text is kept for `fusion_source` and
    registered with `linecache`, so that tracebacks through it show its lines."""
    unpack = [f"{', '.join(f'fn{i}' for i in range(len(shape)))}, = fns"] if shape else []
    source = "\n".join(["def make(chain, fns):", *(f"    {line}" for line in (*unpack, *code))])
    filename = f"{GENERATED}{name}, shape {shape}>"
    _GENERATED[filename] = source
    # (no mtime: linecache.checkcache keeps the entry)
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace: dict[str, Any] = dict(names)
    exec(compile(source, filename, "exec"), namespace)
    factory: Callable[..., Any] = namespace["make"]
    return factory


def fusion_source(publisher: Publisher[Any]) -> str:
    """The code generated so far for *publisher*'s fused chain of maps and filters (a `Flux`
    or the chain itself): every form of it compiled in this process (a source's emit loop, a
    subscriber, an iterator a flattening pulls), each after a comment naming its file name as
    tracebacks show it. Empty when *publisher* is no fused chain or has not run yet."""
    fused = publisher.fused_chain() if isinstance(publisher, SyncSource) else None
    if fused is None:
        return ""
    shape = f", shape {fused.shape}>"
    return "\n\n".join(
        f"# {filename}\n{source}"
        for filename, source in _GENERATED.items()
        if filename.endswith(shape)
    )


# -- a fused chain of maps and filters ----------------------------------------------------


@final
@attrs.frozen
class FusedPublisher(Publisher[R], SyncSource[R], Generic[R]):
    """What `Flux.map` and `Flux.filter` return: *source* seen through *stages*, in order."""

    source: Publisher[Any]
    stages: tuple[Stage, ...]

    @property
    def shape(self) -> tuple[bool, ...]:
        """True for each map stage, False for each filter, in order."""
        return tuple(is_map for is_map, _ in self.stages)

    def subscribe(self, subscriber: Subscriber[R]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        source = self.source
        if isinstance(source, FusableSource):
            source.subscribe_fused(FusedSubscriber(subscriber, stages=self.stages, replenish=False))
        else:
            drops = any(not is_map for is_map, _ in self.stages)
            source.subscribe(FusedSubscriber(subscriber, stages=self.stages, replenish=drops))

    def sync_iterator(self) -> Iterator[R] | None:
        return self._items(skips=False)

    def sync_inner(self, owner: SyncOwner) -> SyncInner[R] | None:
        skips = not all(is_map for is_map, _ in self.stages)
        iterator = self._items(skips=skips)
        return None if iterator is None else SyncInner(owner, iterator, skips=skips)

    def fused_chain(self) -> FusedPublisher[R]:
        return self

    def _items(self, *, skips: bool) -> Iterator[R] | None:
        """The stages run on the source's iterator; with *skips*, None for every
        pass's worth of drops (``DROPS_PER_ITEM * DRAIN_BATCH``)."""
        source = self.source
        iterator = source.sync_iterator() if isinstance(source, SyncSource) else None
        if iterator is None:
            return None
        nullable = type(iterator) not in _RANGE_ITERATORS
        if not self.stages and not nullable:
            return iterator  # (nothing to run, and no None to look for)
        items = _compile_items(self.shape, skips, nullable)
        return items(_RAISING, tuple(fn for _, fn in self.stages))(iterator)


def _stage_names(stages: tuple[Stage, ...]) -> str:
    """The fused operators of *stages*, in order: ``map → filter``."""
    return " → ".join("map" if is_map else "filter" for is_map, _ in stages)


def fuse(source: Publisher[Any], stage: Stage) -> Publisher[Any]:
    """*source* followed by *stage*, merged into *source*'s stages when it is fused already.
    A `Transparent` stage moves behind *stage* (it does nothing to the items, so the order
    does not show), leaving what was before it and *stage* one fused chain."""
    if isinstance(source, Transparent):
        return source.over(fuse(source.source, stage))
    if isinstance(source, FusedPublisher):
        return FusedPublisher(source.source, (*source.stages, stage))
    return FusedPublisher(source, (stage,))


@final
@attrs.define(eq=False)
class FusedSubscriber(OperatorSubscriber[Any, Any]):
    """Runs the stages on every item and passes on what is kept."""

    _stages: tuple[Stage, ...] = attrs.field(kw_only=True, alias="stages")
    _replenish: bool = attrs.field(kw_only=True, alias="replenish")
    """Drops must be re-requested: upstream counted them as emitted and demand is bounded."""
    _outstanding: int = attrs.field(default=0, init=False)
    """Requested upstream and not received yet (counted while `_replenish`)."""
    _dropped: int = attrs.field(default=0, init=False)
    """Dropped and not re-requested yet."""
    _try_next: Callable[[Any], bool] = attrs.field(init=False)
    """Run the stages on an item and pass it on; False when a stage dropped it."""

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        self._try_next = _compile_try_next(self.shape)(self, self.functions)

    @property
    def shape(self) -> tuple[bool, ...]:
        """True for each map stage, False for each filter, in order."""
        return tuple(is_map for is_map, _ in self._stages)

    @property
    def functions(self) -> tuple[Callable[[Any], Any], ...]:
        """The stages' functions, in order."""
        return tuple(fn for _, fn in self._stages)

    @property
    def emit(self) -> Callable[[Any], None]:
        """Where a kept item goes: downstream's ``on_next`` (nowhere once this is done)."""
        return self._next

    @property
    def stage_names(self) -> str:
        """The fused operators, in order: ``map → filter``."""
        return _stage_names(self._stages)

    def scan_stage(self) -> StageScan:
        """Over a fused source the stages run in the source's loop: one stage, the source's
        (which names them); behind any other source, the fused operators as one stage."""
        upstream = self._upstream
        if isinstance(upstream, IteratorSubscription) and upstream.chain is self:
            return upstream.scan_stage()
        return attrs.evolve(super().scan_stage(), operator=f"{self.stage_names} (fused)")

    def null(self, item: Any) -> None:
        """A map stage returned None for *item* (rule 2.13): fail the stream."""
        self._fail(_null_result(item))

    def stage_failed(self, error: Exception) -> None:
        """A stage raised: user code fails the stream (upstream cancelled first), never the caller."""
        self._fail(error)

    def on_next(self, item: Any) -> None:
        kept = self._try_next(item)
        if not self._replenish:
            return
        outstanding = self._outstanding - 1
        dropped = self._dropped if kept else self._dropped + 1
        # Re-request drops in batches: once they are as many as the items still in flight
        # (at the latest when nothing is in flight, whether the last item was kept or not:
        # else the stream stalls owing downstream the dropped items).
        if dropped < outstanding or not dropped:
            self._outstanding = outstanding
            self._dropped = dropped
            return
        self._outstanding = outstanding + dropped
        self._dropped = 0
        upstream = self._upstream
        if upstream is not None:
            upstream.request(dropped)

    def _request(self, n: int) -> None:
        if self._replenish and type(n) is int and n > 0:
            outstanding = add_demand(self._outstanding, n)
            if outstanding == MAX_DEMAND:
                self._replenish = False  # unbounded: a drop needs no replacement
            else:
                self._outstanding = outstanding
        super()._request(n)


@functools.cache
def _compile_try_next(shape: tuple[bool, ...]) -> Callable[..., Callable[[Any], bool]]:
    stages, kept = stage_lines(shape, drop=["return False"], stop="return True")
    body = [*stages, f"chain._next({kept})", "return True"]
    return compile_stages(
        "fused subscriber",
        shape,
        ["def try_next(item):", *(f"    {line}" for line in body), "return try_next"],
    )


def null_result_error(what: str, item: object) -> NullSignalError:
    """Rule 2.13: *what*, a user function, returned None for *item*."""
    return NullSignalError(f"rule 2.13: {what} returned None for {short_repr(item)}")


def _null_result(item: Any) -> NullSignalError:
    return null_result_error("map's function", item)


@final
class _Raising:
    """The ``chain`` of the stages in a fused iterator: a failure is raised out of ``next()``."""

    __slots__ = ()

    def null(self, item: Any) -> None:
        raise _null_result(item)

    def null_item(self, position: int) -> None:
        raise null_item_error(position)

    def null_awaited(self) -> None:
        raise NullSignalError(AWAITED_NULL)

    def stage_failed(self, error: Exception) -> None:
        raise stream_error(error)  # as an unfused stage fails: not the generator's own RuntimeError


_RAISING = _Raising()


@functools.cache
def _compile_items(
    shape: tuple[bool, ...], skips: bool, nullable: bool
) -> Callable[..., Callable[[Iterator[Any]], Iterator[Any]]]:
    """A generator running the stages of *shape* over a fusable source's iterator, with the
    source's own None check (rule 2.13, by position) unless it is not *nullable* (a range's);
    with *skips*, it yields None after every pass's worth of drops
    (``DROPS_PER_ITEM * DRAIN_BATCH``), so that the pull gets them counted."""
    # A local countdown per drop: the pull cannot see the items this generator drops.
    per_pass = DROPS_PER_ITEM * DRAIN_BATCH
    marked = ["skip -= 1", "if not skip:", f"    skip = {per_pass}", "    yield None"]
    stages, kept = stage_lines(shape, drop=[*(marked if skips else []), "continue"], stop="return")
    body = [
        "def items(iterator):",
        *(["    pulled = 0"] if nullable else []),
        *([f"    skip = {per_pass}"] if skips else []),
        "    for item in iterator:",
        *(
            [
                "        if item is None:",
                "            chain.null_item(pulled)",
                "        pulled += 1",
            ]
            if nullable
            else []
        ),
        *(f"        {line}" for line in stages),
        f"        yield {kept}",
        "return items",
    ]
    return compile_stages(f"fused iterator{' marking drops' if skips else ''}", shape, body)


# -- the emit loop of an iterator source --------------------------------------------------

EmitLoop = Callable[["IteratorSubscription[Any]", Callable[[Any], object], Iterator[Any], int], int]
"""``loop(subscription, on_next, iterator, limit)``: emit up to *limit* items, return how many."""


@final
@attrs.define(eq=False)
class IteratorSubscription(DrainSubscription[T]):
    """Emits an iterator's items, through *chain*'s stages when there is one: what a
    `FusableSource` serves a subscriber or a fused chain with. The iterator of a builtin
    sequence (*length* >= 0, see `exact_length`) completes with its last item; one that is not
    *nullable* (a range) skips the None check. Without an iterator, *fault* is signalled."""

    iterator: Iterator[T] | None = attrs.field(default=None, kw_only=True)
    fault: Exception | None = attrs.field(default=None, kw_only=True)
    length: int = attrs.field(default=-1, kw_only=True)
    nullable: bool = attrs.field(default=True, kw_only=True)
    chain: FusedSubscriber | None = attrs.field(default=None, kw_only=True)
    pulled: int = attrs.field(default=0, init=False)
    """Items taken from an unsized iterator so far (a sequence's length hint tells)."""
    _loop_fn: EmitLoop = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        chain = self.chain
        shape = () if chain is None else chain.shape
        functions = () if chain is None else chain.functions
        self._loop_fn = _compile_loop(shape, self.nullable, self.length < 0)(chain, functions)

    def _emit(self, limit: int) -> int:
        iterator = self.iterator
        if iterator is None:
            self._error(self.fault or RuntimeError("iterable unavailable"))
            return 0
        emitted = 0
        if limit > 0:
            chain = self.chain
            if chain is not None:
                on_next: Callable[[Any], object] = chain.emit
            else:
                downstream = self._downstream
                assert downstream is not None
                on_next = downstream.on_next
            emitted = self._loop_fn(self, on_next, iterator, limit)
        # A sequence completes with its last item, without waiting for more demand.
        if self.length >= 0 and self.iterator is not None and not length_hint(iterator):
            self._complete()
        return emitted

    def scan_stage(self) -> StageScan:
        """A source serving a fused chain is one stage with the chain's operators: they run in
        its loop (the source is a ``range`` when it skips the None check)."""
        scan = super().scan_stage()
        source = "from_iterable" if self.nullable else "range"
        chain = self.chain
        if chain is None:
            return attrs.evolve(scan, operator=source)
        return attrs.evolve(scan, operator=f"{source} → {chain.stage_names} (fused)")

    def null_item(self) -> None:
        """The iterator yielded None (rule 2.13): fail the stream, naming its position."""
        iterator = self.iterator
        position = self.pulled
        if self.length >= 0 and iterator is not None:
            position = self.length - length_hint(iterator) - 1
        self._error(null_item_error(position))

    def _release(self) -> None:
        self.iterator = None


@functools.cache
def _compile_loop(
    shape: tuple[bool, ...], nullable: bool, counted: bool
) -> Callable[..., EmitLoop]:
    """The emit loop with the stages of *shape* inlined (none for a plain subscriber), a None
    check when the items may be None and a position count when the iterator is unsized.

    With a filter among the stages, a pass pulls at most what is left of the drain's budget in
    drops (an islice: no count of drops inside the loop) and takes the dropped items off it
    after, `DROPS_PER_ITEM` to an item; it found the end when it pulled fewer. A sequence's
    length hint tells the pulls."""
    drops = False in shape
    stages, kept = stage_lines(shape, drop=["continue"], stop="break")
    count = ["            pulled += 1"] if counted else []
    null_check = [
        "            if item is None:",
        *(["                subscription.pulled = pulled"] if counted else []),
        "                subscription.null_item()",
        "                return emitted",
    ]
    pulls = "pulled - before" if counted else "before - length_hint(iterator)"
    budget = [
        "    budget = subscription._budget",
        f"    most = budget * {DROPS_PER_ITEM}",
        f"    before = {'pulled' if counted else 'length_hint(iterator)'}",
    ]
    if not drops:
        ended = ["        else:", "            subscription._complete()"]
    elif counted:  # the islice ran out: the iterator ended if it gave less than the budget
        ended = [
            "        else:",
            f"            if {pulls} < most:",
            "                subscription._complete()",
        ]
    else:  # _emit finds a sequence's end
        ended = []
    loop = [
        "def emit(subscription, on_next, iterator, limit):",
        *(["    pulled = subscription.pulled"] if counted else []),
        *(budget if drops else []),
        "    emitted = 0",
        "    raised = None",
        "    try:",
        f"        for item in {'islice(iterator, most)' if drops else 'iterator'}:",
        *(null_check if nullable else []),
        *count,
        *(f"            {line}" for line in stages),
        "            try:",
        f"                on_next({kept})",
        "            except Exception as exc:",  # the subscriber's: the drain reports it (2.13)
        "                raised = exc",
        "                break",
        "            emitted += 1",
        "            if emitted == limit or subscription._done:",  # or on_next cancelled
        "                break",
        *ended,
        "    except Exception as exc:",  # the iterator's own failure
        "        subscription._error(exc)",
        *(["    subscription.pulled = pulled"] if counted else []),
        *(
            [f"    subscription._budget = budget - ({pulls} - emitted) // {DROPS_PER_ITEM}"]
            if drops
            else []
        ),
        "    if raised is not None:",
        "        raise raised",
        "    return emitted",
        "return emit",
    ]
    checks = [*(["checking None"] if nullable else []), *(["counting"] if counted else [])]
    name = f"emit loop{' ' + ' and '.join(checks) if checks else ''}"
    return compile_stages(name, shape, loop, islice=islice, length_hint=length_hint)


# -- a fold inside the chain's loop -------------------------------------------------------

_RANGE_ITERATORS: frozenset[type] = frozenset(type(iter(r)) for r in (range(0), range(2**64)))
"""Iterator types that never yield None: no null check."""


def items_at_hand(source: Publisher[T]) -> Iterator[T] | None:
    """The items of *source* as an iterator, when they are at hand and each of them is kept:
    a `SyncSource` that offers them, through its fused maps, with the None check a subscriber
    gets (rule 2.13, by position). ``None`` for any other source, and for a chain that drops
    items (a filter), whose drops only a drain paces (see `SyncInner`).

    What the iterator raises is the source's failure, or a stage's.
    """
    if not isinstance(source, SyncSource):
        return None
    chain = source.fused_chain()
    if chain is None:
        chain = FusedPublisher(source, ())
    elif not all(is_map for is_map, _ in chain.stages):
        return None
    return chain.sync_iterator()


FoldLoop = Callable[[Iterable[Any], Callable[[Any, Any], Any], Any, int], tuple[Any, int]]
"""``fold(items, step, acc, pulled)``: fold *items* into *acc*; the new *acc* and *pulled*."""


def fold_at_hand(
    source: Publisher[T], step: Callable[[A, T], A], seed: A
) -> Coroutine[Any, Any, A] | None:
    """``step(…step(step(seed, x0), x1)…, xn)`` over the items of *source* run inside one
    generated loop, when *source* is a `FusableSource`, an `AsyncSource`, an `AwaitingSource`
    whose calls are at hand or a fused chain over one: no subscriber, no ``on_next`` per
    item. ``None`` when its items are not at hand (the caller subscribes).

    Over a synchronous source (a range one slice at a time), the loop gives the event loop a
    turn between batches of `DRAIN_BATCH` items once `FOLD_TURN` has passed since the last
    (after every batch when a batch takes longer); over awaited calls after every
    `DRAIN_BATCH` items it pulls, as a drain does; over an async source whenever the source
    waits, as in a hand-written ``async for`` loop. Errors are those a subscribed fold sees:
    a stage's (as the stage fails the stream), a None item's (rule 2.13, named by position
    for a synchronous source), a call's, the iterator's and *step*'s, raised from the
    ``await``; an async source's iterator is closed first (as a cancel closes it), also when
    the awaiting task is cancelled, which cancels a running call too.
    """
    base, shape, functions = _parts(source)
    if isinstance(base, AsyncSource):
        return _fold_awaiting(functools.partial(_claim_fold, base, shape, functions), step, seed)
    if isinstance(base, AwaitingSource):
        calls = base.awaited_calls()
        if calls is None:
            return None
        fold_calls = _compile_awaiting(shape, "fold", calls=True)(_RAISING, functions)
        return _fold_awaiting(lambda: (calls, fold_calls), step, seed)
    if not isinstance(base, FusableSource):
        return None
    items: Iterator[Any] | range | None = base.sync_range()
    if items is None:
        items = base.sync_iterator()
        if items is None:
            return None
        nullable = type(items) not in _RANGE_ITERATORS
        counted = nullable or exact_length(items) < 0
    else:
        nullable = counted = False
    fold: FoldLoop = _compile_fold(shape, nullable, counted)(_RAISING, functions)
    return _fold_in_turns(fold, items, counted, step, seed)


def _parts(
    source: Publisher[Any],
) -> tuple[Publisher[Any], tuple[bool, ...], tuple[Callable[[Any], Any], ...]]:
    """The source of *source*'s fused chain, its shape and its functions (*source* itself and
    no stages when it is no fused chain), looking past `Transparent` stages."""
    while isinstance(source, Transparent):
        source = source.source
    if isinstance(source, FusedPublisher):
        return source.source, source.shape, tuple(fn for _, fn in source.stages)
    return source, (), ()


def _raise_as_stream_error(exc: Exception) -> NoReturn:
    """Raise *exc* as `stream_error` has it (a StopIteration would end the coroutine: PEP 479)."""
    error = stream_error(exc)
    if error is exc:
        raise exc
    raise error from exc


FOLD_TURN = 0.001
"""Seconds a fold over items at hand runs between two turns of the loop, checked after every
`DRAIN_BATCH` items: a turn is a whole pass of the loop (a poll of the selector, where a busy
machine switches processes), which costs a fast fold 5 to 15% when taken after every batch. A
slow fold (a batch outlasting the budget) still turns after every batch."""


async def _fold_in_turns(
    fold: FoldLoop,
    items: Iterator[Any] | range,
    counted: bool,
    step: Callable[[A, Any], A],
    acc: A,
) -> A:
    """Run *fold* a batch of `DRAIN_BATCH` items at a time (a range's slices, iterated as a
    hand-written loop iterates its range, else an islice of the iterator), giving the loop a
    turn between batches once `FOLD_TURN` has passed since the last one."""
    rest = items if isinstance(items, range) else None
    pulled = 0
    turn_at = perf_counter() + FOLD_TURN
    while True:
        batch: Iterable[Any]
        if rest is None:
            batch = islice(items, DRAIN_BATCH)
        else:
            batch, rest = rest[:DRAIN_BATCH], rest[DRAIN_BATCH:]
        try:
            acc, now = fold(batch, step, acc, pulled)
        except Exception as exc:
            _raise_as_stream_error(exc)
        if rest is not None:
            if not rest:
                return acc
        elif (now - pulled < DRAIN_BATCH) if counted else not length_hint(items):
            return acc
        pulled = now
        if perf_counter() >= turn_at:
            await asyncio.sleep(0)
            turn_at = perf_counter() + FOLD_TURN


@functools.cache
def _compile_fold(
    shape: tuple[bool, ...], nullable: bool, counted: bool
) -> Callable[..., FoldLoop]:
    """The loop of `fold_at_hand`: the stages of *shape*, then ``acc = step(acc, item)``; a None
    check when the items may be None, and a count of the items pulled when it is needed to
    name a None item or to learn the end (the length hint of a sequence tells it)."""
    # Uncaught: `_fold_in_turns` fails the stream with what a stage raises, as the chain would.
    stages, kept = stage_lines(shape, drop=["continue"], stop="return acc, pulled", caught=False)
    body = [
        # The stages' functions as defaults: fast locals in the loop, not closure cells.
        f"def fold(items, step, acc, pulled{''.join(f', fn{i}=fn{i}' for i in range(len(shape)))}):",
        "    for item in items:",
        *(["        if item is None:", "            chain.null_item(pulled)"] if nullable else []),
        *(["        pulled += 1"] if counted else []),
        *(f"        {line}" for line in stages),
        f"        acc = step(acc, {kept})",
        "    return acc, pulled",
        "return fold",
    ]
    checks = [*(["checking None"] if nullable else []), *(["counting"] if counted else [])]
    name = f"fold{' ' + ' and '.join(checks) if checks else ''}"
    return compile_stages(name, shape, body)


# -- an awaiting loop over an async source -----------------------------------------------


AwaitingFold = Callable[
    [AsyncIterator[Any] | AwaitedCalls[Any], Callable[[Any, Any], Any], Any],
    Coroutine[Any, Any, Any],
]
"""``fold(source, step, acc)``: fold the items of *source*, kept by the stages, into *acc*."""


async def _fold_awaiting(
    claim: Callable[[], tuple[AsyncIterator[Any] | AwaitedCalls[Any], AwaitingFold]],
    step: Callable[[A, Any], A],
    acc: A,
) -> A:
    """Claim the source's iterator (or calls) with the fold over it, and run the fold (see
    `fold_at_hand`)."""
    try:
        source, fold = claim()
        result: A = await fold(source, step, acc)
    except Exception as exc:
        _raise_as_stream_error(exc)
    return result


def _claim_fold(
    source: AsyncSource[Any],
    shape: tuple[bool, ...],
    functions: tuple[Callable[[Any], Any], ...],
) -> tuple[AsyncIterator[Any], AwaitingFold]:
    """Claim *source*'s iterator (or its batches) and the fold over it with the stages of
    *shape*."""
    iterator, batched = _claim(source)
    return iterator, _compile_awaiting(shape, "fold", batched=batched)(_RAISING, functions)


def iterate_awaiting(source: Publisher[T]) -> AsyncGenerator[T, None] | None:
    """What ``async for`` over *source* reads when *source* is an `AsyncSource` or a fused
    chain over one: an async generator that reads the source's iterator in the reader's own
    task, runs the stages inline and yields what they keep. No subscriber, no buffer and no
    task: nothing is read ahead of the reader. ``None`` for any other source, or without a
    running loop (the caller subscribes).

    The source's iterator is claimed at once (a one-shot iterator's rule); what claiming it
    raises comes out of the first ``__anext__``. Closing the generator (``aclose()``, leaving
    an ``async for`` early, dropping it) closes the source's iterator, as a cancel does; so
    does an error. The loop gets a turn whenever the source waits (as in a hand-written
    ``async for`` loop, no turns of its own: it runs in the reader's task).
    """
    base, shape, functions = _parts(source)
    if not isinstance(base, AsyncSource) or current_loop() is None:
        return None
    iterator: AsyncIterator[Any]
    try:
        iterator, batched = _claim(base)
    except Exception as exc:
        iterator, batched = _Failed(stream_error(exc)), False
    items: Callable[[AsyncIterator[Any]], AsyncGenerator[T, None]]
    items = _compile_awaiting(shape, "items", batched=batched)(_RAISING, functions)
    return items(iterator)


@final
@attrs.frozen
class _Failed:
    """An async iterator whose first ``__anext__`` raises *error*: a source that could not start."""

    error: BaseException

    def __aiter__(self) -> _Failed:
        return self

    async def __anext__(self) -> Any:
        raise self.error


@final
@attrs.define(eq=False)
class AwaitingSubscription(DrainSubscription[T]):
    """Serves an async iterator's items to a subscriber, or through *chain*'s stages: what an
    `AsyncSource` subscribes (`serve_calls` serves `AwaitedCalls` the same way, each call
    awaited in the task). A task of its own, started at the first request, reads the
    iterator only while there is demand and hands each kept item on as it comes, with the
    stages inline (a dropped item costs no demand): no drain pass, future or request per
    item. It waits for a request only when demand runs out, and gives the loop a turn after
    every `DRAIN_BATCH` items it pulls. Without an iterator, *fault* is signalled.

    An iterator of batches (*batched*, `AsyncSource.async_batches`) is read a batch at a time,
    each as large as the demand not covered by the items in hand; the batch (or its kept
    items) is held as it is and handed on straight from it, from the loop turn after the read,
    so that the next read (when demand asks for more) is on its way while they are emitted.

    The iterator's error, a None item (rule 2.13) and a CancelledError the task did not get
    from a cancel fail the stream after the items in hand; the signal comes first, then the
    iterator is closed, as it is on cancel (the task is cancelled unless the cancel came from
    inside ``on_next``).
    """

    iterator: AsyncIterator[Any] | AwaitedCalls[T] | None = attrs.field(default=None, init=False)
    batched: bool = attrs.field(default=False, init=False)
    fault: BaseException | None = attrs.field(default=None, init=False)
    chain: FusedSubscriber | None = attrs.field(default=None, kw_only=True)
    _task: asyncio.Task[None] | None = attrs.field(default=None, init=False)
    _wake: asyncio.Future[None] | None = attrs.field(default=None, init=False)
    _slot: deque[T] = attrs.field(factory=deque, init=False)
    """The item the task read and a pass hands on."""
    _batches: deque[Sequence[T]] = attrs.field(factory=deque, init=False)
    """The batches the task read (their kept items, when there are stages), *batched*."""
    _head: Iterator[T] | None = attrs.field(default=None, init=False)
    """The batch being handed on, where passes left it."""
    _held: int = attrs.field(default=0, init=False)
    """Items in `_batches` and `_head`."""
    _pass_on: Callable[[T], object] | None = attrs.field(default=None, init=False)
    """The subscriber's ``on_next``, or the chain's after its stages ran in the task."""
    _finished: bool = attrs.field(default=False, init=False)
    """The iterator ended (or failed, with `_failure`) while items were in hand."""
    _failure: BaseException | None = attrs.field(default=None, init=False)

    def _emit(self, limit: int) -> int:
        if self.fault is not None:
            self._error(self.fault)
            return 0
        in_hand: int | deque[T]
        if self.batched:
            count = self._emit_batches(limit) if self._held and limit else 0
            in_hand = self._held
        else:
            # The task puts one item in at a time (with demand for it): no emit loop, no
            # call but on_next per item.
            slot = in_hand = self._slot
            count = 0
            if slot and limit:
                pass_on = self._pass_on
                assert pass_on is not None
                pass_on(slot.popleft())
                count = 1
        if in_hand or self._done:
            return count
        if self._finished:
            failure, self._failure = self._failure, None
            self.end(failure)
            return count
        # The task reads: a request wakes or starts it; a reader of batches starts at once
        # (its first read, wanting nothing, prepares it: a failure to connect needs no demand).
        if self._requested > count or self.batched:
            wake = self._wake
            if wake is not None:
                self._wake = None
                if not wake.done():
                    wake.set_result(None)
            elif self._task is None:
                assert self._loop is not None
                self._task = self._loop.create_task(self._run())
        return count

    def _emit_batches(self, limit: int) -> int:
        """Hand up to *limit* held items on, straight from their batches (no queue per item);
        return how many. Stops as soon as ``on_next`` cancels or fails the stream."""
        on_next = self._pass_on
        assert on_next is not None
        batches = self._batches
        count = 0
        while count < limit:
            head = self._head
            if head is None:
                if not batches:
                    break
                head = self._head = iter(batches.popleft())
            left = length_hint(head)  # (a list's or a tuple's iterator: exact)
            for item in islice(head, limit - count):
                on_next(item)
                if self._done:
                    break
            taken = left - length_hint(head)
            count += taken
            self._held -= taken
            if self._done:
                break
            if taken == left:
                self._head = None
        return count

    def hold_batch(self, batch: Sequence[T]) -> None:
        """Keep the non-empty *batch* (of items to hand on as they are) until passes hand it on."""
        if type(batch) is not list and type(batch) is not tuple:
            batch = list(batch)  # (its iterator tells how many are left)
        self._batches.append(batch)
        self._held += len(batch)

    def uncovered(self) -> int:
        """Demand not covered by the items in hand: the most the next batch may hold."""
        return self._requested - self._held - len(self._slot)

    async def demand(self) -> bool:
        """Wait until there is demand the items in hand do not cover; False once the stream
        is done instead."""
        while self._requested <= self._held + len(self._slot):
            if self._done:
                return False
            assert self._loop is not None
            self._wake = self._loop.create_future()
            await self._wake
        return not self._done

    def end(self, failure: BaseException | None) -> None:
        """The iterator ended, or failed with *failure*: signal it after the items in hand."""
        if self._slot or self._held:
            self._finished, self._failure = True, failure
            self.signal()
        elif failure is None:
            self._complete()
        else:
            self._error(failure)

    def null_item(self) -> None:
        """The iterator yielded None (rule 2.13): fail the stream."""
        self.end(NullSignalError(AWAITED_NULL))

    async def _run(self) -> None:
        iterator = self.iterator
        downstream = self._downstream
        if iterator is None or downstream is None:  # cancelled before the task started
            return
        chain = self.chain
        self._pass_on = downstream.on_next if chain is None else chain.emit
        shape = () if chain is None else chain.shape
        functions = () if chain is None else chain.functions
        self.iterator = None
        calls = isinstance(iterator, AwaitedCalls)
        emit = _compile_awaiting(shape, "emit", calls=calls, batched=self.batched)
        await emit(chain, functions)(self, self._slot, iterator)

    def _release(self) -> None:
        self._slot.clear()
        self._batches.clear()
        self._head = None
        self._held = 0
        self._pass_on = None  # (it holds the subscriber, rule 3.13)
        task = self._task
        if task is None:
            iterator, self.iterator = self.iterator, None
            if isinstance(iterator, AwaitedCalls):
                return  # (a synchronous source's iterator needs no closing)
            if iterator is not None and self._loop is not None and not self._loop.is_closed():
                self._task = self._loop.create_task(close_async_iterator(iterator))
        elif task is not asyncio.current_task(self._loop) and not task.done():
            # Not held: the cancelled task's traceback holds its frames, on_next among their
            # locals, and the subscription may outlive the subscriber (rule 3.13).
            self._task = None
            task.cancel()


_AWAITING_FORMS = {
    "fold": (
        "async def fold(source, step, acc):",
        ["chain.null_awaited()"],
        ["acc = step(acc, {kept})"],
        "return acc",
    ),
    "items": ("async def items(source):", ["chain.null_awaited()"], ["yield {kept}"], "return"),
    "emit": (
        "async def emit(subscription, slot, source):",
        ["subscription.null_item()", "return"],
        [
            # A pass of the trampoline hands it on (a request from on_next only adds demand,
            # a subscriber that raises is cancelled and reported, demand is counted).
            "slot.append({kept})",
            "subscription.signal()",
            "if subscription._done:",  # on_next cancelled, or failed
            "    return",
            "if not subscription._requested and not await subscription.demand():",
            "    return",
        ],
        "return",
    ),
}
"""For each form of `_compile_awaiting`: its header, what it does with a None item of an async
iterator and with a kept item, and how a stage that failed the stream ends it."""

_BATCH_EMITTED = [
    # The kept items go out from the next loop turn, so that the next read (when demand asks
    # for more) goes out first; a task that finds the drain behind (items of an earlier batch
    # still in hand) or kept nothing gives the loop a turn: a reader that never waits cannot
    # hold it.
    "if subscription._held:",
    "    subscription.signal_soon()",
    "if before or not subscription._held:",
    "    await sleep(0)",
    "if subscription._done:",
    "    return",
    "if subscription._requested <= subscription._held and not await subscription.demand():",
    "    return",
]
"""What the batched ``emit`` form does after each batch."""


@functools.cache
def _compile_awaiting(
    shape: tuple[bool, ...], form: str, *, calls: bool = False, batched: bool = False
) -> Callable[..., Any]:
    """The loop of an awaiting reader over an async source: ``async for`` over its iterator
    (with *calls*: ``await call(x)`` for each item *x* of `AwaitedCalls`), the None check
    (rule 2.13), the stages of *shape*, then what the *form* does with a kept item: ``fold``
    folds it into ``acc`` (`AwaitingFold`), ``items`` yields it (an async generator),
    ``emit`` hands it on for an `AwaitingSubscription` and counts it against demand, waiting
    for more when it runs out. ``emit``, and any loop over calls (a call that never suspends
    gives the loop no turn), gives the loop a turn after every `DRAIN_BATCH` items it pulls
    (a task of its own may not hold the loop; ``fold`` and ``items`` over an async iterator
    run in the awaiting task as a hand-written loop does, and the loop gets its turn
    whenever the source waits). *batched*: the iterator yields batches of items, never None
    (no check), each run through as a plain loop; ``emit`` holds a batch's kept items (a
    batch without stages as it is: `AwaitingSubscription.hold_batch`) and signals once per
    batch (`_BATCH_EMITTED`). An iterator (not calls) is closed however the loop ends;
    a CancelledError that is not the running task's own cancellation fails the stream
    (`cancelled_elsewhere`). ``fold`` and ``items`` raise what fails the stream; ``emit``
    signals it, and completes the stream when the iterator ends, after the items in hand."""
    header, on_null, on_kept, stop = _AWAITING_FORMS[form]
    emits = form == "emit"
    fail = "subscription.end(" if emits else "raise ("
    if emits and batched:
        on_kept = ["kept.append({kept})"]
    stages, kept = stage_lines(shape, drop=["continue"], stop=stop)
    stopped = ["if subscription._done:", "    return"] if emits else []
    if calls:
        on_null = [f"{fail}source.null_error(value))", *(["return"] if emits else [])]
        cancelled = "source.cancelled_error(exc)"
    else:
        cancelled = "cancelled_elsewhere('the async iterable', exc)"
    # A batch holds no None (its source checks what may be None): no check per item there.
    checked = [] if batched else ["if item is None:", *(f"    {line}" for line in on_null)]
    counts_turns = emits and not calls and not batched
    per_item = [
        *checked,
        *(
            [
                "turn -= 1",
                "if not turn:",
                f"    turn = {DRAIN_BATCH}",
                "    await sleep(0)",
                *(f"    {line}" for line in stopped),
            ]
            if counts_turns
            else []
        ),
        *stages,
        *(line.format(kept=kept) for line in on_kept),
    ]
    if calls:
        # A turn after every batch of calls (a countdown per item costs a quarter of a call
        # that does not suspend); the batch that finds the end is empty, unless the items are
        # a sequence's, whose length tells.
        loop = [
            "items, call = source.items, source.call",
            "while True:",
            "    value = END",
            f"    for value in islice(items, {DRAIN_BATCH}):",
            "        item = await call(value)",
            *(f"        {line}" for line in per_item),
            "    if value is END or not exact_length(items):",
            "        break",
            "    await sleep(0)",
            *(f"    {line}" for line in stopped),
        ]
    elif not batched:
        loop = ["async for item in source:", *(f"    {line}" for line in per_item)]
    elif emits and not shape:  # the batch is held as it is
        loop = [
            "async for batch in source:",
            "    before = subscription._held",
            "    if batch:",
            "        subscription.hold_batch(batch)",
            *(f"    {line}" for line in _BATCH_EMITTED),
        ]
    elif emits:
        loop = [
            "async for batch in source:",
            "    before = subscription._held",
            "    kept = []",
            "    for item in batch:",
            *(f"        {line}" for line in per_item),
            "    if kept:",
            "        subscription.hold_batch(kept)",
            *(f"    {line}" for line in _BATCH_EMITTED),
        ]
    else:
        loop = [
            "async for batch in source:",
            "    for item in batch:",
            *(f"        {line}" for line in per_item),
        ]
    body = [
        header,
        *([f"    turn = {DRAIN_BATCH}"] if counts_turns else []),
        "    try:",
        *(f"        {line}" for line in loop),
        *(["        subscription.end(None)"] if emits else []),
        *(["        return acc"] if form == "fold" else []),
        "    except CancelledError as exc:",
        "        if cancelling_this_task():",
        "            raise",
        f"        {fail}{cancelled})",
        *(["    except Exception as exc:", "        subscription.end(exc)"] if emits else []),
        *([] if calls else ["    finally:", "        await close(source)"]),
        f"return {header.split()[2].split('(')[0]}",
    ]
    return compile_stages(
        f"awaiting {form}{' of calls' if calls else ' of batches' if batched else ''}",
        shape,
        body,
        sleep=asyncio.sleep,
        CancelledError=asyncio.CancelledError,
        cancelling_this_task=cancelling_this_task,
        cancelled_elsewhere=cancelled_elsewhere,
        close=close_async_iterator,
        islice=islice,
        exact_length=exact_length,
        END=_END,
    )


# -- the synchronous inner a flattening operator pulls ------------------------------------


class SyncOwner(Protocol):
    """What a `SyncInner` reports to: the subscription whose drain pulls it."""

    def inner_error(self, inner: Any, error: BaseException) -> None:
        """*inner* failed with *error*."""


@final
@attrs.define(eq=False, repr=False)
class SyncInner(Generic[T]):
    """A `SyncSource`'s iterator, pulled by its owner's drain as it emits (`pull`)."""

    _owner: SyncOwner
    _source: Iterator[T] | None
    """The source's iterator; ``None`` once it ended, failed or was cancelled."""
    iterator: Iterator[T] | None = attrs.field(init=False)
    """What the next pass pulls from: the source's iterator, behind an item looked ahead."""
    index: int = 0
    """A slot number for the owner's bookkeeping."""
    ahead: bool = attrs.field(default=True, kw_only=True)
    """Look one item ahead whenever a pass stops at its limit or without demand, so that the
    owner learns of the end without more demand; False: only when the owner calls
    `look_ahead`."""
    skips: bool = attrs.field(default=False, kw_only=True)
    """The iterator yields None in place of every pass's worth of items it dropped, never as
    an item (it raises for a None item itself)."""
    pulled: int = attrs.field(default=0, init=False)
    """Items emitted so far, counted at the end of each pass (for a None item's position)."""
    done: bool = attrs.field(default=False, init=False)
    """Nothing more will come: the iterator ended or failed (its error, if any, is in
    ``error``), or the inner was cancelled. What a running `pull` checks after every item (an
    owner may cancel this inner from inside ``on_next``, as ``switch_map`` does)."""
    error: BaseException | None = attrs.field(default=None, init=False)

    def __attrs_post_init__(self) -> None:
        self.iterator = self._source

    def cancel(self) -> None:
        """Stop pulling: the iterator is dropped and never advanced again."""
        self._source = self.iterator = None
        self.done = True

    def scan_stage(self) -> StageScan:
        """An iterator pulled by its owner's drain: what it gave so far, nothing held."""
        return StageScan(
            operator="inner (pulled)",
            state=stage_state(ended=self.done, error=self.error),
            error=self.error,
            emitted=self.pulled,
        )

    def pull(self, drain: DrainSubscription[Any], limit: int) -> int:
        """Hand up to *limit* items to *drain*'s subscriber, pulling each from the iterator as
        it goes out; return how many.

        Stops as soon as ``on_next`` cancels or fails the stream, or cancels this inner. Learns
        here that the iterator ended, failed or yielded None (the owner hears of it through
        ``inner_error``), and looks ahead when the pass stops at *limit* or without demand.
        The None of an iterator that ``skips`` stands for a pass's worth of dropped items
        (``DROPS_PER_ITEM * DRAIN_BATCH``): they spend *drain*'s budget and the pass stops.
        """
        source = self.iterator
        if source is None:
            return 0
        if limit <= 0:  # no demand: only find out whether it ended
            if self.ahead:
                self.look_ahead()
            return 0
        downstream = drain._downstream
        assert downstream is not None
        on_next = downstream.on_next
        count = 0
        raised = None
        try:
            for item in source:
                if item is None:
                    if self.skips:
                        drain._budget -= DRAIN_BATCH
                        break
                    self._failed(null_item_error(self.pulled + count))
                    return count
                count += 1
                try:
                    on_next(item)
                except Exception as exc:  # the subscriber's: the drain reports it (2.13)
                    raised = exc
                    break
                if count == limit or drain._done or self.done:
                    break
            else:
                self.cancel()  # it ended
                return count
        except Exception as exc:  # the iterator failed
            self._failed(exc)
            return count
        if raised is not None:
            raise raised
        self.pulled += count
        if count:
            self.iterator = self._source  # (an item held ahead went first)
        if count == limit and self.ahead and not drain._done:
            self.look_ahead()
        return count

    def look_ahead(self) -> None:
        """Find out whether anything is left, so that the owner can finish without further
        demand: one item is pulled and held when the iterator cannot tell its length."""
        source = self._source
        if source is None or self.iterator is not source:  # ended, or an item is held already
            return
        remaining = exact_length(source)
        if remaining > 0:
            return
        if remaining < 0:
            try:
                item = next(source, _END)
            except Exception as exc:
                self._failed(exc)
                return
            if item is None:
                if not self.skips:
                    self._failed(null_item_error(self.pulled))
                return  # (a run of drops: whether anything is left is still unknown)
            if item is not _END:
                self.iterator = chain((item,), source)
                return
        self.cancel()  # it ended

    def _failed(self, error: BaseException) -> None:
        """The iterator raised *error*, or yielded None: the owner hears it as an inner error."""
        self.cancel()
        self.error = error
        self._owner.inner_error(self, error)


# -- async fusion: a subscriber that is an async boundary takes the place of one -----------


class AsyncBoundary:
    """Marks a publisher that is an async boundary: its ``subscribe`` offers its place to an
    `AsyncBoundarySubscriber` (`fuse_boundary`), whose buffer then holds what the boundary's
    would. A mixin beside `Publisher` (``isinstance`` against it costs no Python call)."""

    __slots__ = ()


class Batching:
    """Marks a publisher whose items are lists of its source's items, each list what was
    buffered when it was taken, never waiting for one to fill (``batch``). A reader that
    buffers the source's items itself may hand out slices of its buffer instead of
    subscribing to this publisher; only the list boundaries differ, which depend on timing
    anyway. A mixin beside `Publisher`."""

    __slots__ = ()

    def batched(self) -> tuple[Publisher[Any], int]:
        """The source, and the most items one list holds."""
        raise NotImplementedError


class ItemsSubscriber(Subscriber[T]):
    """A subscriber that can take several items in one call (`on_items`): subscribed with
    ``Flux.subscribe`` to a source whose items are at hand (`items_at_hand`), it is served a
    request at a time by a `PulledSubscription` (`subscribe_pulled`), with no ``on_next``
    per item. A subscriber whose ``on_next`` only appends to a buffer (the one behind
    ``async for``, a connector's sink that a task of its own writes out) overrides
    `on_items` to take the list in one step. A mixin beside `Subscriber` (``isinstance``
    against it costs no Python call)."""

    __slots__ = ()

    def on_items(self, items: list[T]) -> None:
        """Several items at once, as as many ``on_next`` calls would deliver them: what a
        `PulledSubscription` sends, never more than requested. None of them is None; the list
        is the subscriber's to keep."""
        on_next = self.on_next
        for item in items:
            on_next(item)


def subscribe_pulled(subscriber: ItemsSubscriber[T], source: Publisher[T]) -> bool:
    """Subscribe *subscriber* to *source* with a `PulledSubscription` when *source*'s items
    are at hand (`items_at_hand`): each request is pulled from its iterator into one list.
    False when they are not at hand: nothing is done, the caller subscribes."""
    items: Iterator[T] | list[T] | None = (
        source.sync_list() if isinstance(source, FusableSource) else None
    )
    if items is None:
        items = items_at_hand(source)
    if items is None:
        return False
    subscription = PulledSubscription(items, subscriber, current_loop())
    chain = source.fused_chain() if isinstance(source, SyncSource) else None
    subscription.source_name = (
        operator_name(type(source))
        if chain is None
        else f"{operator_name(type(chain.source))} → {_stage_names(chain.stages)}"
    )
    subscriber.on_subscribe(subscription)
    return True


class AsyncBoundarySubscriber(ItemsSubscriber[T]):
    """A subscriber whose signals only fill a buffer that a task of its own reads: it can
    stand in for an async boundary in front of it.

    An async boundary (``publish_on``) puts a buffer between its source and its subscriber
    and hands the items on from a loop callback, so that upstream never runs on the
    subscriber's stack. The pull buffer behind ``async for`` works that way already: it only
    appends what arrives and wakes a reader that runs in a task of its own. A second buffer
    in front of it would cost a drain pass and one more ``on_next`` per item and buy nothing,
    so the boundary lets it take its place (`fuse_boundary`), the way Reactor's async fusion
    lets a consumer drain the queue of the ``publishOn`` before it.
    """

    __slots__ = ()

    def take_boundary(self, prefetch: int, replenish: int) -> bool:
        """Stand in for the async boundary that is about to subscribe this subscriber.

        Called before ``on_subscribe``. From then on the subscriber asks upstream for
        *prefetch* items at first and for *replenish* more each time that many were taken
        (``replenish == 0``: never again), every request made from a loop callback (a
        `DeferredSubscription`).

        Returns:
            False when it cannot (no running loop, subscribed or cancelled already): the
            boundary then stays in front of it.
        """
        raise NotImplementedError


def fuse_boundary(
    subscriber: Subscriber[T], source: Publisher[T], prefetch: int, replenish: int
) -> bool:
    """What an async boundary's ``subscribe`` calls first: subscribe *subscriber* to *source*
    in the boundary's place when it is an `AsyncBoundarySubscriber` that takes the boundary's
    *prefetch* and *replenish*. False when the boundary must subscribe it as usual."""
    if isinstance(subscriber, AsyncBoundarySubscriber) and subscriber.take_boundary(
        prefetch, replenish
    ):
        if not subscribe_pulled(subscriber, source):  # (at hand: no signal per item)
            source.subscribe(subscriber)
        return True
    return False


@final
@attrs.define(eq=False)
class PulledSubscription(Subscription, Generic[T]):
    """A source's items at hand (`items_at_hand`) served to an `ItemsSubscriber`
    (`subscribe_pulled`: an `AsyncBoundarySubscriber` in the boundary's place, a sink):
    ``request(n)`` pulls up to *n* items from *iterator* and hands them
    over with one `ItemsSubscriber.on_items` call, then ``on_complete`` once the
    iterator runs out, or ``on_error`` with what it raised (after the items pulled before).
    A list (`FusableSource.sync_list`, a ``from_iterable`` over one) is sliced instead, with
    one None check in C per slice (by identity, as the fused iterator's; rule 2.13, named
    by position) and no Python step per item; its end comes with its last item.

    A pull takes at most `DRAIN_BATCH` items; more demand is pulled from a fresh callback of
    *loop*, so a large request over a long source gives the loop a turn as a drain does. A
    request made while a pull runs only adds demand (rule 3.3); anything but an int > 0 is
    signalled as an error (rule 3.9); after cancel or termination, the iterator and the
    subscriber are let go (rule 3.13). A subscriber that raises is taken as cancelled and its
    error reported (rule 2.13).
    """

    _iterator: Iterator[T] | list[T] | None
    """What is pulled: an iterator, or a list (`FusableSource.sync_list`) taken a slice a pull."""
    _subscriber: ItemsSubscriber[T] | None
    _loop: asyncio.AbstractEventLoop | None
    _demand: int = attrs.field(default=0, init=False)
    _busy: bool = attrs.field(default=False, init=False)
    """A pull is running or scheduled: a request only adds demand."""
    _pulled: int = attrs.field(default=0, init=False)
    _state: StageState = attrs.field(default="active", init=False)
    source_name: str = attrs.field(default="items at hand", init=False)
    """What `snapshot` calls the source whose items are pulled."""

    def scan_stage(self) -> StageScan:
        """The source, pulled in the boundary's place: what is asked and not pulled yet, and
        what it gave (counted per pull)."""
        return StageScan(
            operator=f"{self.source_name} (pulled)",
            state=self._state,
            demand=self._demand,
            emitted=self._pulled,
            loop=self._loop,
        )

    def request(self, n: int) -> None:
        subscriber = self._subscriber
        if subscriber is None:
            return
        # A request from another thread (an author's sink) pulls on the owning loop.
        if current_loop() is not self._loop and hand_over(self._loop, self.request, n):
            return
        if type(n) is not int or n <= 0:
            self.cancel()
            subscriber.on_error(request_error(n))
            return
        self._demand = add_demand(self._demand, n)
        if not self._busy:
            self._pull()

    def cancel(self) -> None:
        if self._iterator is not None:
            self._state = "cancelled"
        self._iterator = None
        self._subscriber = None

    def _pull(self) -> None:
        self._busy = True  # a request from inside a signal below only adds demand (rule 3.3)
        while True:
            iterator, subscriber = self._iterator, self._subscriber
            if iterator is None or subscriber is None:
                return
            demand = self._demand
            count = demand if demand < DRAIN_BATCH else DRAIN_BATCH
            items: list[T]
            failure: BaseException | None = None
            if isinstance(iterator, list):
                start = self._pulled
                items = iterator[start : start + count]
                if any(map(is_, items, repeat(None))):  # (by identity: no item's == is asked)
                    at = next(i for i, item in enumerate(items) if item is None)
                    failure = null_item_error(start + at)
                    del items[at:]  # the items before it are delivered, as an iterator's
                ended = failure is not None or start + len(items) >= len(iterator)
            else:
                items = []
                try:
                    items.extend(islice(iterator, count))  # keeps what came before a failure
                except Exception as exc:
                    failure = stream_error(exc)
                ended = failure is not None or len(items) < count
            self._demand = produced(demand, len(items))
            self._pulled += len(items)
            if ended:
                self._iterator = self._subscriber = None
                self._state = "failed" if failure is not None else "completed"
            signal = "on_items"
            try:
                if items:
                    subscriber.on_items(items)
                if failure is not None:
                    signal = "on_error"
                    subscriber.on_error(failure)
                elif ended:
                    signal = "on_complete"
                    subscriber.on_complete()
            except Exception as exc:
                self.cancel()
                name = raising_subscriber(exc, signal, subscriber)
                report_error(
                    exc,
                    f"{name}.{signal} raised; its subscription is cancelled (rule 2.13)",
                    self._loop,
                )
                return
            if not self._demand or self._iterator is None:
                self._busy = False
                return
            if self._loop is not None:
                self._loop.call_soon(self._pull)  # the loop's turn; busy until then
                return


@final
@attrs.define(eq=False)
class DeferredSubscription(Subscription):
    """*upstream* with every ``request`` made from a callback of *loop*; ``cancel`` acts at
    once, and a request still waiting after it is dropped. Called from *loop* only.

    A request that raises (a publisher breaking rule 3.15) cancels upstream and fails
    *subscriber* with the error, which nobody would see otherwise.
    """

    _upstream: Subscription | None
    _loop: asyncio.AbstractEventLoop
    _subscriber: Subscriber[Any]

    def request(self, n: int) -> None:
        self._loop.call_soon(self._request, n)

    def scan_stage(self) -> StageScan:
        """Not a stage: what it defers to (nothing once cancelled)."""
        upstream = self._upstream
        return (
            StageScan(operator="deferred", state="cancelled")
            if upstream is None
            else scan_of(upstream)
        )

    def cancel(self) -> None:
        upstream, self._upstream = self._upstream, None
        if upstream is not None:
            upstream.cancel()

    def _request(self, n: int) -> None:
        upstream = self._upstream
        if upstream is None:
            return
        try:
            upstream.request(n)
        except Exception as exc:
            self.cancel()
            self._subscriber.on_error(exc)
