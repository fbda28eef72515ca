"""``publish`` / ``replay``: a `ConnectableFlux` that shares one upstream subscription.

Backpressure: that of the processor behind it: ``publish`` uses a `MulticastProcessor`
(prefetch window, lockstep: the slowest subscriber sets the pace), ``replay`` a
`ReplayProcessor` (unbounded-in, each subscriber at its own pace).
Errors: upstream errors and completion reach every subscriber of that connection; with
``publish`` the next ``connect`` after termination subscribes upstream afresh, ``replay``
keeps replaying the terminated history (and its terminal signal). Disposing a connection cancels
upstream and fails its subscribers with `anyio.ClosedResourceError`.
Context: each subscriber receives its signals (and the operators after it run their
callbacks) in the `contextvars` context in which it subscribed, whoever connected.

``connect()`` subscribes the processor to upstream; ``ref_count(n)`` connects when the
n-th subscriber arrives and disconnects when the last one leaves; ``auto_connect(n)``
connects at the n-th subscriber and never disconnects.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar, final

import anyio
import attrs

from .._core import (
    LoopBound,
    OperatorSubscriber,
    Processor,
    Publisher,
    Subscriber,
    require_not_none,
)
from .._processors._multicast import MulticastProcessor

__all__ = ("ConnectableFlux", "Hub", "publish")

T = TypeVar("T")
W = TypeVar("W")


class Hub(Processor[T, T], Protocol[T]):
    """What a `ConnectableFlux` multicasts through (the multicast and replay processors)."""

    @property
    def terminated(self) -> bool:
        """True once the processor will accept no more items."""
        ...

    def disconnect(self, error: BaseException) -> None:
        """Cancel upstream and fail the subscribers with *error*."""
        ...


@final
@attrs.define(eq=False)
class _Connection:
    """The `Disposable` that ``connect()`` returns."""

    _hub: Hub[object] | None
    _started: bool = attrs.field(default=False, init=False)

    def start(self, source: Publisher[Any]) -> None:
        """Subscribe the hub to *source*, once; a synchronous source may dispose the
        connection before this returns."""
        hub = self._hub
        if not self._started and hub is not None:
            self._started = True
            source.subscribe(hub)

    def dispose(self) -> None:
        """Cancel upstream and fail this connection's subscribers; idempotent."""
        hub, self._hub = self._hub, None
        if hub is not None and not hub.terminated:
            hub.disconnect(anyio.ClosedResourceError("the connection was disposed"))

    @property
    def disposed(self) -> bool:
        """True once disposed."""
        return self._hub is None


@final
@attrs.define(eq=False)
class ConnectableFlux(Publisher[T], LoopBound, Generic[T, W]):
    """A hot publisher that subscribes upstream only when connected.

    ``W`` is what `ref_count` and `auto_connect` return: the fluent wrapper (``Flux[T]``)
    that *wrap* builds, so this layer does not import the fluent one.
    """

    _source: Publisher[T]
    _factory: Callable[[], Hub[T]]
    _wrap: Callable[[Publisher[T]], W]
    _renew_when_terminated: bool = attrs.field(default=True, kw_only=True, alias="renew")
    """``publish``: the next subscriber after termination starts a new connection; ``replay``
    keeps serving the terminated history until a ref-count disconnect."""
    _hub: Hub[T] | None = attrs.field(default=None, init=False)
    _connection: _Connection | None = attrs.field(default=None, init=False)

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self._current().subscribe(subscriber)

    def connect(self) -> _Connection:
        """Subscribe upstream (once per connection) and return the connection's `Disposable`."""
        connection = self._open()
        connection.start(self._source)
        return connection

    def ref_count(self, n: int = 1) -> W:
        """Connect at the *n*-th subscriber; disconnect when the last one leaves."""
        if n <= 0:
            raise ValueError(f"ref_count needs n > 0, got {n}")
        return self._wrap(_RefCountPublisher(self, n))

    def auto_connect(self, n: int = 1) -> W:
        """Connect at the *n*-th subscriber, then stay connected."""
        if n < 0:
            raise ValueError(f"auto_connect needs n >= 0, got {n}")
        publisher = _AutoConnectPublisher(self, n)
        if n == 0:
            self.connect()
        return self._wrap(publisher)

    def _current(self) -> Hub[T]:
        hub = self._hub
        if hub is None or (self._renew_when_terminated and hub.terminated):
            hub = self._hub = self._factory()
            self._connection = None
        return hub

    def _open(self) -> _Connection:
        """The current connection, made if there is none; upstream is subscribed by `connect`."""
        hub = self._current()
        connection = self._connection
        if connection is None:
            connection = self._connection = _Connection(hub)  # type: ignore[arg-type]
        return connection

    def _disconnect(self, connection: _Connection) -> None:
        if self._connection is connection:
            self._connection = None
            self._hub = None
        connection.dispose()


@final
@attrs.define(eq=False)
class _AutoConnectPublisher(Publisher[T], Generic[T]):
    _connectable: ConnectableFlux[T, Any]
    _remaining: int

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self._connectable.subscribe(subscriber)
        if self._remaining > 0:
            self._remaining -= 1
            if self._remaining == 0:
                self._connectable.connect()


@final
@attrs.define(eq=False)
class _RefCountPublisher(Publisher[T], Generic[T]):
    _connectable: ConnectableFlux[T, Any]
    _threshold: int
    _count: int = attrs.field(default=0, init=False)
    _connection: _Connection | None = attrs.field(default=None, init=False)

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self._count += 1
        self._connectable.subscribe(_RefCountSubscriber(subscriber, parent=self))
        if self._connection is None and self._count >= self._threshold:
            # Known before upstream is subscribed: a synchronous source may make every
            # subscriber leave inside connect(), and the last one must find it to disconnect.
            self._connection = self._connectable._open()
            self._connectable.connect()

    def _left(self, cancelled: bool) -> None:
        self._count -= 1
        if self._count == 0:
            connection, self._connection = self._connection, None
            if connection is not None and cancelled:
                self._connectable._disconnect(connection)


@final
@attrs.define(eq=False)
class _RefCountSubscriber(OperatorSubscriber[T, T]):
    _parent: _RefCountPublisher[T] = attrs.field(kw_only=True, alias="parent")
    _counted: bool = attrs.field(default=True, init=False)

    def on_next(self, item: T) -> None:
        self._next(item)

    def on_error(self, error: BaseException) -> None:
        self._leave(cancelled=False)
        super().on_error(error)

    def on_complete(self) -> None:
        self._leave(cancelled=False)
        super().on_complete()

    def cancel(self) -> None:
        if self._hand_over_cancel():
            return
        super().cancel()
        self._leave(cancelled=True)

    def _leave(self, *, cancelled: bool) -> None:
        if self._counted:
            self._counted = False
            self._parent._left(cancelled)


def publish(
    source: Publisher[T], buffer_size: int, wrap: Callable[[Publisher[T]], W]
) -> ConnectableFlux[T, W]:
    """A connectable over a fresh `MulticastProcessor` per connection."""
    if buffer_size <= 0:
        raise ValueError(f"buffer_size must be > 0, got {buffer_size}")
    return ConnectableFlux(
        source, lambda: MulticastProcessor[T](buffer_size, auto_cancel=False), wrap
    )
