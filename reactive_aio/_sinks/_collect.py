"""Awaitable terminals: ``to_list``, ``first``, ``last``, ``reduce``, the aggregates (``count``,
``all``, ``any``, ``contains``, ``is_empty``, ``to_dict``, ``to_multidict``,
``to_sorted_list``), and `consume`.

Backpressure: ``first`` and ``is_empty`` request one item and cancel after it; the others
request unbounded, since they may have to see every item; ``all``, ``any`` and ``contains``
cancel the rest as soon as the answer is known. Over a source whose items are at hand
(``range``, ``from_iterable``, ``just``, and maps and filters over those) the folds that see
every item (``to_list``, ``last``, ``reduce``, ``count``, ``to_dict``, …) subscribe nothing:
the fold runs inside the chain's own loop (`fold_at_hand`), which gives the event loop a turn
as a drain does.
Errors: the stream's error, or an exception raised by a user function (reducer, predicate,
key or value function; upstream is cancelled first), is raised from the ``await``;
``first``/``last`` of an empty stream raise `NoSuchElementError` unless a default was given;
``to_sorted_list`` raises what sorting raises (items that do not compare).
Rules: a second ``on_subscribe`` is cancelled (rule 2.5); an error that arrives after the
result was settled is reported, never dropped silently. Signals come from this library's
stages or across the loop boundary, which refuses ``None`` (rule 2.13) and hands signals from
other threads to the loop, so the per-item path has no check of its own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, ClassVar, Generic, TypeVar, final

import attrs

from .._core import (
    MAX_DEMAND,
    LoopBoundary,
    NoSuchElementError,
    Publisher,
    Subscriber,
    Subscription,
    fold_at_hand,
    report_error,
    require_not_none,
    stream_error,
)

__all__ = (
    "MISSING",
    "collect_all",
    "collect_any",
    "collect_contains",
    "collect_count",
    "collect_dict",
    "collect_first",
    "collect_is_empty",
    "collect_last",
    "collect_list",
    "collect_multidict",
    "collect_reduce",
    "collect_sorted_list",
    "consume",
)

T = TypeVar("T")
A = TypeVar("A")
K = TypeVar("K")
V = TypeVar("V")

MISSING: Any = object()
"""Marks an absent default."""


@attrs.define(eq=False)
class _FoldSubscriber(Subscriber[T], Generic[T, A]):
    """Folds every item into an accumulator and resolves a future when the stream ends."""

    _step: Callable[[A, T], A]
    _acc: A
    _future: asyncio.Future[A]
    _upstream: Subscription | None = attrs.field(default=None, init=False)
    _done: bool = attrs.field(default=False, init=False)
    _DEMAND: ClassVar[int] = MAX_DEMAND

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "2.13", "on_subscribe's subscription")
        if self._upstream is not None or self._done:
            subscription.cancel()  # rule 2.5, or already settled
            return
        self._upstream = subscription
        subscription.request(self._DEMAND)

    def on_next(self, item: T) -> None:
        # No done-check: items in flight after an early finish only touch a settled result.
        try:
            self._acc = self._step(self._acc, item)
        except Exception as exc:
            self._finish_with(exc)

    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        if self._done:
            report_error(
                error, "a stream failed after its result was settled", self._future.get_loop()
            )
            return
        self._done = True
        self._upstream = None
        self._settle(error)

    def on_complete(self) -> None:
        if not self._done:
            self._done = True
            self._upstream = None
            self._settle(None)

    def _finish_with(self, error: Exception | None) -> None:
        """End early: cancel upstream and resolve with the accumulator or *error*."""
        if self._done:
            return
        self._done = True
        upstream, self._upstream = self._upstream, None
        if upstream is not None:
            upstream.cancel()
        self._settle(error)

    def _settle(self, error: BaseException | None) -> None:
        """Resolve the future with the accumulator, or fail it with *error*: as `stream_error`
        has it, since asyncio refuses a StopIteration and the awaiter would wait forever."""
        future = self._future
        if future.done():
            return
        if error is None:
            future.set_result(self._acc)
        else:
            future.set_exception(stream_error(error))


@final
@attrs.define(eq=False)
class _FirstSubscriber(_FoldSubscriber[T, A]):
    """Takes the first item and cancels the rest."""

    _DEMAND: ClassVar[int] = 1

    def on_next(self, item: T) -> None:
        super().on_next(item)
        self._finish_with(None)


@final
@attrs.define(eq=False)
class _UntilSubscriber(_FoldSubscriber[T, A]):
    """Folds until the accumulator is *stop* (an ``is``: the steps return `True`/`False`),
    then cancels the rest: the answer of ``all``/``any`` is known."""

    _stop: object = attrs.field(kw_only=True, alias="stop")

    def on_next(self, item: T) -> None:
        try:
            acc = self._acc = self._step(self._acc, item)
        except Exception as exc:
            self._finish_with(exc)
            return
        if acc is self._stop:
            self._finish_with(None)


async def _fold(
    source: Publisher[T],
    step: Callable[[A, T], A],
    seed: A,
    *,
    first_only: bool = False,
    stop: object = MISSING,
) -> A:
    if not first_only and stop is MISSING:  # (a fold that stops early must be able to)
        folded = fold_at_hand(source, step, seed)
        if folded is not None:  # a fused synchronous chain: folded in its own loop
            return await folded
    future: asyncio.Future[A] = asyncio.get_running_loop().create_future()
    subscriber: _FoldSubscriber[T, A]
    if first_only:
        subscriber = _FirstSubscriber(step, seed, future)
    elif stop is not MISSING:
        subscriber = _UntilSubscriber(step, seed, future, stop=stop)
    else:
        subscriber = _FoldSubscriber(step, seed, future)
    source.subscribe(subscriber)
    try:
        return await future
    except asyncio.CancelledError:
        subscriber._finish_with(None)  # the awaiting task was cancelled: cancel upstream too
        raise


def consume(
    source: Publisher[T], fn: Callable[[T], object], loop: asyncio.AbstractEventLoop
) -> asyncio.Future[None]:
    """Subscribe *fn* with unbounded demand now; the future ends with the stream.

    The subscriber *source* gets is the fold behind a `LoopBoundary`, whatever *source* is:
    it refuses ``None`` and a second subscription on its own (rules 2.13, 2.5), and a signal
    from another thread reaches *fn* inside *loop*.

    If *fn* raises, upstream is cancelled and the future fails with that error; cancelling the
    future cancels upstream.
    """
    future: asyncio.Future[None] = loop.create_future()

    def call(acc: None, item: T) -> None:
        fn(item)

    subscriber = _FoldSubscriber(call, None, future)
    future.add_done_callback(lambda f: subscriber._finish_with(None) if f.cancelled() else None)
    source.subscribe(LoopBoundary(subscriber, loop))
    return future


def _append(acc: list[T], item: T) -> list[T]:
    acc.append(item)
    return acc


def _replace(acc: object, item: T) -> T:
    return item


async def collect_list(source: Publisher[T]) -> list[T]:
    """All items, in order."""
    return await _fold(source, _append, [])


async def collect_reduce(source: Publisher[T], fn: Callable[[A, T], A], seed: A) -> A:
    """``fn(…fn(fn(seed, x0), x1)…, xn)``; *seed* for an empty stream."""
    return await _fold(source, fn, seed)


async def _edge(source: Publisher[T], default: T, *, first: bool, name: str) -> T:
    result: T = await _fold(source, _replace, MISSING, first_only=first)
    if result is MISSING:
        if default is MISSING:
            raise NoSuchElementError(f"{name}() of an empty stream")
        return default
    return result


async def collect_first(source: Publisher[T], default: T = MISSING) -> T:
    """The first item (the rest is cancelled), or *default* for an empty stream."""
    return await _edge(source, default, first=True, name="first")


async def collect_last(source: Publisher[T], default: T = MISSING) -> T:
    """The last item, or *default* for an empty stream."""
    return await _edge(source, default, first=False, name="last")


def _increment(acc: int, item: object) -> int:
    return acc + 1


async def collect_count(source: Publisher[object]) -> int:
    """How many items the stream has."""
    return await _fold(source, _increment, 0)


async def collect_all(source: Publisher[T], predicate: Callable[[T], object]) -> bool:
    """True if *predicate* holds for every item (so for an empty stream); the first item it
    fails answers False and cancels the rest."""

    def holds(acc: bool, item: T) -> bool:
        return bool(predicate(item))

    return await _fold(source, holds, True, stop=False)


async def collect_any(source: Publisher[T], predicate: Callable[[T], object]) -> bool:
    """True once *predicate* holds for an item (the rest is cancelled); False if it never does."""

    def holds(acc: bool, item: T) -> bool:
        return bool(predicate(item))

    return await _fold(source, holds, False, stop=True)


async def collect_contains(source: Publisher[object], value: object) -> bool:
    """True once an item equals *value* (the rest is cancelled)."""
    return await collect_any(source, lambda item: item == value)


async def collect_is_empty(source: Publisher[object]) -> bool:
    """True if the stream completes without an item; one item answers False."""
    return await _fold(source, _replace, MISSING, first_only=True) is MISSING


async def collect_dict(
    source: Publisher[T], key: Callable[[T], K], value: Callable[[T], V] | None
) -> dict[K, Any]:
    """``{key(item): value(item)}`` (the item itself without *value*); a later item with the
    same key replaces the earlier one."""

    def put(acc: dict[K, Any], item: T) -> dict[K, Any]:
        acc[key(item)] = item if value is None else value(item)
        return acc

    return await _fold(source, put, {})


async def collect_multidict(
    source: Publisher[T], key: Callable[[T], K], value: Callable[[T], V] | None
) -> dict[K, list[Any]]:
    """``{key: [value(item), …]}`` (the items themselves without *value*), in stream order."""

    def add(acc: dict[K, list[Any]], item: T) -> dict[K, list[Any]]:
        found = acc.get(k := key(item))
        if found is None:
            found = acc[k] = []
        found.append(item if value is None else value(item))
        return acc

    return await _fold(source, add, {})


async def collect_sorted_list(
    source: Publisher[T], key: Callable[[T], Any] | None, reverse: bool
) -> list[T]:
    """All items, sorted once the stream completed (stable, as `sorted`)."""
    items = await collect_list(source)
    items.sort(key=key, reverse=reverse)
    return items
