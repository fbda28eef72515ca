"""Awaitable terminals: ``to_list``, ``first``, ``last``, ``reduce``, and `consume`.

Backpressure: ``first`` requests one item and cancels after it; the others request unbounded,
since they must see every item anyway. Over a source whose items are at hand (``range``,
``from_iterable``, ``just``, and maps and filters over those) ``to_list``, ``last`` and
``reduce`` subscribe nothing: the fold runs inside the chain's own loop (`fold_at_hand`),
which gives the event loop a turn as a drain does.
Errors: the stream's error, or an exception raised by the reducer (after which upstream is
cancelled), is raised from the ``await``; ``first``/``last`` of an empty stream raise
`NoSuchElementError` unless a default was given.
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
    "collect_first",
    "collect_last",
    "collect_list",
    "collect_reduce",
    "consume",
)

T = TypeVar("T")
A = TypeVar("A")

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


async def _fold(
    source: Publisher[T], step: Callable[[A, T], A], seed: A, *, first_only: bool = False
) -> A:
    if not first_only:
        folded = fold_at_hand(source, step, seed)
        if folded is not None:  # a fused synchronous chain: folded in its own loop
            return await folded
    future: asyncio.Future[A] = asyncio.get_running_loop().create_future()
    fold = _FirstSubscriber if first_only else _FoldSubscriber
    subscriber = fold(step, seed, future)
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
