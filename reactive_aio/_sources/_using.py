"""``Flux.using``, ``Flux.using_async`` and ``Flux.using_context``: a resource per subscriber.

For every subscriber a resource is acquired, a publisher is built from it with *use*, and
the resource is released exactly once when that subscriber's stream ends: after the terminal
signal went downstream, or on cancel. ``using`` takes synchronous callables; ``using_async``
awaits *acquire* and *release* in tasks; ``using_context`` enters an async context manager
and exits it with the stream's error, if any.

Backpressure: that of the publisher *use* returns; demand requested while an asynchronous
acquisition runs is passed on to it once it is subscribed.
Errors: if *acquire* fails, the subscriber gets ``on_error`` and nothing is released; if
*use* fails, the resource is released and the subscriber gets ``on_error``; a failing
*release* has nobody left to signal to and is reported (logger and loop exception handler).
Loop: ``using_async``/``using_context`` run acquisition and release in tasks on the loop the
subscription belongs to (a subscription outside of a running loop fails with ``on_error``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Generic, TypeVar, final

import attrs

from .._core import (
    ArbiterSubscriber,
    Publisher,
    Subscriber,
    adopt,
    cancelled_elsewhere,
    cancelling_this_task,
    report_error,
    require_not_none,
    short_repr,
)

__all__ = ("UsingAsyncPublisher", "UsingPublisher", "using_context")

T = TypeVar("T")
Res = TypeVar("Res")

_NO_RESOURCE: Any = object()

_release_tasks: set[asyncio.Task[None]] = set()
"""Release tasks in flight: held here so they are not garbage-collected half-way."""


@final
@attrs.frozen
class UsingPublisher(Publisher[T], Generic[Res, T]):
    """What `Flux.using` returns."""

    acquire: Callable[[], Res]
    use: Callable[[Res], Publisher[T]]
    release: Callable[[Res], object]

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        using = _UsingSubscriber[T](subscriber, release=self.release)
        using.start()
        if using.done:
            return
        try:
            resource = self.acquire()
        except Exception as exc:
            using.fail(exc)
            return
        using.resource = resource
        using.use(self.use)


@final
@attrs.frozen
class UsingAsyncPublisher(Publisher[T], Generic[Res, T]):
    """What `Flux.using_async` and `Flux.using_context` return."""

    acquire: Callable[[], Awaitable[Res]]
    use: Callable[[Res], Publisher[T]]
    release: Callable[[Res, BaseException | None], Awaitable[object]]

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        using = _UsingSubscriber[T](subscriber, release_async=self.release)
        using.start()
        if using.done:
            return
        loop = using.loop
        if loop is None:
            using.fail(RuntimeError("using_async needs a running event loop"))
            return
        using.acquiring = loop.create_task(self._acquire(using))

    async def _acquire(self, using: _UsingSubscriber[T]) -> None:
        try:
            resource = await self.acquire()
        except Exception as exc:
            using.acquiring = None
            using.fail(exc)
            return
        except asyncio.CancelledError as exc:
            if cancelling_this_task():
                raise
            using.acquiring = None
            using.fail(cancelled_elsewhere("using_async's acquire", exc))
            return
        using.acquiring = None
        using.resource = resource
        if using.done:  # cancelled while acquiring
            using.release_now(None)
            return
        using.use(self.use)


def using_context(
    factory: Callable[[], AbstractAsyncContextManager[Res]], use: Callable[[Res], Publisher[T]]
) -> UsingAsyncPublisher[tuple[AbstractAsyncContextManager[Res], Res], T]:
    """``Flux.using_context``: enter ``factory()`` per subscriber, exit it with the stream's error."""

    async def acquire() -> tuple[AbstractAsyncContextManager[Res], Res]:
        cm = factory()
        return cm, await cm.__aenter__()

    def use_entered(entered: tuple[AbstractAsyncContextManager[Res], Res]) -> Publisher[T]:
        return use(entered[1])

    async def release(
        entered: tuple[AbstractAsyncContextManager[Res], Res], error: BaseException | None
    ) -> object:
        cm = entered[0]
        if error is None:
            return await cm.__aexit__(None, None, None)
        return await cm.__aexit__(type(error), error, error.__traceback__)

    return UsingAsyncPublisher(acquire, use_entered, release)


@final
@attrs.define(eq=False)
class _UsingSubscriber(ArbiterSubscriber[T]):
    _release: Callable[[Any], object] | None = attrs.field(
        default=None, kw_only=True, alias="release"
    )
    _release_async: Callable[[Any, BaseException | None], Awaitable[object]] | None = attrs.field(
        default=None, kw_only=True, alias="release_async"
    )
    resource: Any = attrs.field(default=_NO_RESOURCE, init=False)
    acquiring: asyncio.Task[None] | None = attrs.field(default=None, init=False)
    _error: BaseException | None = attrs.field(default=None, init=False)

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        return self._loop

    def use(self, use: Callable[[Any], Publisher[T]]) -> None:
        try:
            publisher: object = use(self.resource)
            if not isinstance(publisher, Publisher):
                raise TypeError(f"using's use() returned {short_repr(publisher)}, not a Publisher")
        except Exception as exc:
            self.fail(exc)
            return
        self._switch_to(adopt(publisher))

    def fail(self, error: BaseException) -> None:
        self._error = error
        self._finish_error(error)

    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        self._error = error
        super().on_error(error)

    def _on_end(self) -> None:
        acquiring, self.acquiring = self.acquiring, None
        if acquiring is not None:
            acquiring.cancel()  # nothing acquired yet; _acquire releases if it was too late
        if self.resource is not _NO_RESOURCE:
            self.release_now(self._error)

    def release_now(self, error: BaseException | None) -> None:
        resource, self.resource = self.resource, _NO_RESOURCE
        if resource is _NO_RESOURCE:
            return
        if self._release is not None:
            try:
                self._release(resource)
            except Exception as exc:
                report_error(exc, "using's release raised", self._loop)
        elif self._release_async is not None and self._loop is not None:
            task = self._loop.create_task(self._release_in_task(resource, error))
            _release_tasks.add(task)
            task.add_done_callback(_release_tasks.discard)

    async def _release_in_task(self, resource: object, error: BaseException | None) -> None:
        assert self._release_async is not None
        try:
            await self._release_async(resource, error)
        except Exception as exc:
            report_error(exc, "using's release raised", self._loop)
        except asyncio.CancelledError as exc:
            if cancelling_this_task():
                raise
            report_error(
                cancelled_elsewhere("using's release", exc), "using's release raised", self._loop
            )
