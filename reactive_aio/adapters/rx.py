"""reactivex (RxPY 4) observables ⇄ publishers.

An observable has no demand: it pushes. `from_observable` therefore keeps a bounded buffer of
what was pushed ahead of demand and applies an `Overflow` policy when it is full; every drop
is counted exactly (``on_drop`` sees each dropped item). `to_observable` subscribes with a
bounded prefetch window and replenishes it as the observer is called.

Backpressure: `from_observable`: buffer(``buffer_size``) then the policy; `to_observable`:
requests ``prefetch`` and replenishes in batches (observers cannot push back).
Errors: pass through both ways; an overflow under `Overflow.ERROR` fails the stream with
`MissingBackpressureError` after the buffered items, and disposes the observable.
Loop: `from_observable` belongs to the loop it was subscribed on; items an observable pushes
from another thread (an RxPY scheduler) are handed over to that loop in order.

Needs the ``interop`` extra: ``pip install 'reactive_aio[interop]'``.
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Callable
from typing import Any, Generic, TypeVar, final

import attrs

try:
    import reactivex
    from reactivex.disposable import Disposable as RxDisposable
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "reactive_aio.adapters.rx needs reactivex: pip install 'reactive_aio[interop]'"
    ) from exc

from .._core import (
    DrainSubscription,
    MissingBackpressureError,
    NullSignalError,
    Publisher,
    Subscriber,
    current_thread,
    hand_over,
    require_not_none,
)
from .._flux import Flux
from .._sinks._aiter import DEFAULT_PREFETCH

__all__ = ("ObservablePublisher", "Overflow", "from_observable", "to_observable")

T = TypeVar("T")


class Overflow(enum.Enum):
    """What `from_observable` does with an item that finds the buffer full.

    ``buffer_size=0`` with `DROP_LATEST` is "drop" (items without demand are dropped);
    ``buffer_size=1`` with `DROP_OLDEST` is "latest" (keep only the newest).
    """

    ERROR = "error"
    """Fail the stream with `MissingBackpressureError` (after the buffered items)."""
    DROP_LATEST = "drop_latest"
    """Drop the item that does not fit."""
    DROP_OLDEST = "drop_oldest"
    """Drop the oldest buffered item to make room."""


@final
@attrs.frozen
class ObservablePublisher(Publisher[T], Generic[T]):
    """What `from_observable` returns; subscribes to the observable once per subscriber."""

    observable: Any
    buffer_size: int
    overflow: Overflow
    on_drop: Callable[[T], object] | None

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        subscription = _ObservableSubscription[T](
            subscriber, self.buffer_size, self.overflow, self.on_drop
        )
        subscription.start()
        if subscription.done:
            return
        try:
            disposable = self.observable.subscribe(
                on_next=subscription.push,
                on_error=subscription.fail,
                on_completed=subscription.finish,
            )
        except Exception as exc:
            subscription.fail(exc)
            return
        subscription.attach(disposable)


@final
@attrs.define(eq=False)
class _ObservableSubscription(DrainSubscription[T]):
    _buffer_size: int
    _overflow: Overflow
    _on_drop: Callable[[T], object] | None
    _queue: deque[T] = attrs.field(factory=deque, init=False)
    _finished: bool = attrs.field(default=False, init=False)
    _failure: BaseException | None = attrs.field(default=None, init=False)
    _disposable: Any = attrs.field(default=None, init=False)
    dropped: int = attrs.field(default=0, init=False)

    def attach(self, disposable: Any) -> None:
        if self._done or self._finished:
            disposable.dispose()
        else:
            self._disposable = disposable

    # -- the observer's side (any thread) ---------------------------------------------

    def push(self, item: T) -> None:
        if self._thread != current_thread() and hand_over(
            self._loop, self._thread, self.push, item
        ):
            return
        if self._done or self._finished:
            return
        if item is None:
            self._end(NullSignalError("rule 2.13: the observable emitted None"))
            return
        queue = self._queue
        queue.append(item)
        self._drain()
        # Whatever outstanding demand cannot take right now is "ahead of demand".
        if len(queue) - self._requested > self._buffer_size and not self._done:
            overflow = self._overflow
            if overflow is Overflow.DROP_LATEST:
                self._drop(queue.pop())
            elif overflow is Overflow.DROP_OLDEST:
                self._drop(queue.popleft())
            else:
                queue.pop()
                self._end(
                    MissingBackpressureError(
                        f"from_observable: {item!r} arrived with the buffer of "
                        f"{self._buffer_size} full and no demand (Overflow.ERROR)"
                    )
                )

    def fail(self, error: Exception) -> None:
        if self._thread != current_thread() and hand_over(
            self._loop, self._thread, self.fail, error
        ):
            return
        self._end(error)

    def finish(self) -> None:
        if self._thread != current_thread() and hand_over(self._loop, self._thread, self.finish):
            return
        self._end(None)

    # -- internals --------------------------------------------------------------------

    def _drop(self, item: T) -> None:
        self.dropped += 1
        on_drop = self._on_drop
        if on_drop is not None:
            try:
                on_drop(item)
            except Exception as exc:
                self._queue.clear()
                self._end(exc)

    def _end(self, error: BaseException | None) -> None:
        if self._finished:
            return
        self._finished = True
        self._failure = error
        self._dispose()
        self._drain()

    def _dispose(self) -> None:
        disposable, self._disposable = self._disposable, None
        if disposable is not None:
            disposable.dispose()

    def _emit(self, limit: int) -> int:
        queue = self._queue
        downstream = self._downstream
        assert downstream is not None
        emitted = 0
        while emitted < limit and queue and not self._done:
            downstream.on_next(queue.popleft())
            emitted += 1
        if not queue and self._finished and not self._done:
            failure = self._failure
            if failure is None:
                self._complete()
            else:
                self._error(failure)
        return emitted

    def _release(self) -> None:
        self._queue.clear()
        self._dispose()


def from_observable(
    observable: Any,
    *,
    buffer_size: int = DEFAULT_PREFETCH,
    overflow: Overflow = Overflow.ERROR,
    on_drop: Callable[[T], object] | None = None,
) -> Flux[T]:
    """An RxPY observable as a `Flux`, with a bounded buffer for what runs ahead of demand.

    Args:
        observable: a ``reactivex.Observable``; subscribed once per subscriber.
        buffer_size: items kept beyond the current demand.
        overflow: what happens to an item that does not fit.
        on_drop: called with every dropped item (a raising callback fails the stream).

    Backpressure: buffer(*buffer_size*) then *overflow*.
    """
    if buffer_size < 0:
        raise ValueError(f"buffer_size must be >= 0, got {buffer_size}")
    return Flux(ObservablePublisher[T](observable, buffer_size, overflow, on_drop))


def to_observable(publisher: Publisher[T], *, prefetch: int = DEFAULT_PREFETCH) -> Any:
    """*publisher* as a ``reactivex.Observable``; each observer subscribes afresh.

    Disposing the observer's subscription cancels the publisher's.

    Args:
        publisher: the source.
        prefetch: the demand window; replenished as items reach the observer.
    """
    if prefetch <= 0:
        raise ValueError(f"prefetch must be > 0, got {prefetch}")
    flux = Flux.from_publisher(publisher)

    def subscribe(observer: Any, scheduler: Any = None) -> Any:
        handle = flux.subscribe(
            on_next=observer.on_next,
            on_error=observer.on_error,
            on_complete=observer.on_completed,
            prefetch=prefetch,
        )
        return RxDisposable(handle.dispose)

    return reactivex.create(subscribe)
