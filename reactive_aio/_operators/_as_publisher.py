"""What a flattening operator's function may return, turned into a publisher.

Not an operator: the helper behind ``flat_map``, ``flat_map_sequential``, ``concat_map`` and
``switch_map``, which first ask `as_inner` whether the items are at hand (a `SyncSource`, pulled
instead of subscribed). The kind of the *returned object* decides, checked in this order:

1. a `Publisher` (anything with ``subscribe``) is subscribed, across the loop boundary when
   it is not one of this library's (see ``reactive_aio._core._loop_boundary``);
2. an async iterable (has ``__aiter__``) is pulled as demand allows, like
   ``Flux.from_async_iterable``;
3. an awaitable (a coroutine, a future, anything with ``__await__``) is one value: it is
   started at once as a task and its result is emitted when requested.

Anything else (including a plain list) is a `TypeError` naming what came back; ``None`` is a
`NullSignalError`. The caller fails its stream with that error.

Backpressure: an awaitable's value is computed eagerly and held until requested.
Errors: an awaitable's exception ends the inner stream with ``on_error``; a
``None`` result is a `NullSignalError`; an awaitable cancelled by anything but the stream ends
it with a `RuntimeError` (`cancelled_elsewhere`).
Loop: awaitables and async iterables need a running event loop.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterable, Awaitable, Generator
from typing import Any, Generic, TypeVar, final

import attrs

from .._core import (
    DrainSubscription,
    NullSignalError,
    Publisher,
    Subscriber,
    SyncInner,
    SyncOwner,
    SyncSource,
    adopt,
    cancelled_elsewhere,
    require_not_none,
    short_repr,
)
from .._sources._from_async_iterable import AsyncIterablePublisher

__all__ = ("AwaitablePublisher", "as_inner", "as_publisher")

T = TypeVar("T")

_EMPTY: Any = object()


def as_inner(
    value: object, operator: str, owner: SyncOwner
) -> tuple[SyncInner[Any] | None, Publisher[Any] | None]:
    """``(inner, None)`` for what *operator*'s function returned when its items are at hand
    (a `SyncSource`: *owner* pulls them in its drain), else ``(None, as_publisher(...))``."""
    inner = value.sync_inner(owner) if isinstance(value, SyncSource) else None
    if inner is not None:
        return inner, None
    return None, as_publisher(value, operator)


def as_publisher(value: object, operator: str) -> Publisher[Any]:
    """Return a publisher for what *operator*'s function returned (see the module docstring)."""
    if callable(getattr(value, "subscribe", None)):  # what isinstance(value, Publisher) checks
        return adopt(value)  # type: ignore[arg-type]
    if isinstance(value, AsyncIterable):
        return AsyncIterablePublisher(value)
    if inspect.isawaitable(value):
        return AwaitablePublisher(value)
    if value is None:
        raise NullSignalError(f"rule 2.13: {operator}'s function returned None")
    raise TypeError(
        f"{operator}'s function must return a Publisher, an async iterable or an awaitable, "
        f"not {short_repr(value)}"
    )


@final
@attrs.frozen
class AwaitablePublisher(Publisher[T], Generic[T]):
    """One value from an awaitable; an awaitable runs once, so this serves one subscriber."""

    awaitable: Awaitable[T]

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        subscription = _AwaitableSubscription[T](subscriber)
        awaitable = self.awaitable
        subscription.start()
        if subscription.done:
            _discard(awaitable)
            return
        if subscription._loop is None:
            _discard(awaitable)
            subscription._error(RuntimeError("awaiting a value needs a running event loop"))
            return
        future = asyncio.ensure_future(awaitable, loop=subscription._loop)
        subscription.future = future
        subscription.owned = inspect.iscoroutine(awaitable) or not isinstance(
            awaitable, asyncio.Future
        )
        future.add_done_callback(subscription.settled)


def _discard(awaitable: Awaitable[Any]) -> None:
    """Close a coroutine that will never be awaited, so it does not warn."""
    if inspect.iscoroutine(awaitable) or isinstance(awaitable, Generator):
        awaitable.close()


@final
@attrs.define(eq=False)
class _AwaitableSubscription(DrainSubscription[T]):
    future: asyncio.Future[T] | None = attrs.field(default=None, init=False)
    owned: bool = attrs.field(default=False, init=False)
    """We created the task, so cancelling it disturbs nobody else."""
    _value: Any = attrs.field(default=_EMPTY, init=False)

    def settled(self, future: asyncio.Future[T]) -> None:
        if future.cancelled():
            if not self._done:
                self._error(cancelled_elsewhere("the awaitable"))
            return
        error = future.exception()  # also marks it retrieved when we were cancelled
        if self._done:
            return
        if error is not None:
            self._error(error)
            return
        value = future.result()
        if value is None:
            self._error(NullSignalError("rule 2.13: the awaitable returned None"))
            return
        self._value = value
        self._drain()

    def _emit(self, limit: int) -> int:
        value = self._value
        if value is _EMPTY or limit == 0:
            return 0
        self._value = _EMPTY
        downstream = self._downstream
        assert downstream is not None
        downstream.on_next(value)
        self._complete()
        return 1

    def _release(self) -> None:
        future, self.future = self.future, None
        self._value = _EMPTY
        if future is not None and not future.done():
            future.remove_done_callback(self.settled)
            if self.owned:
                future.cancel()
