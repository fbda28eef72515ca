"""reactivex (RxPY 4) observables ⇄ publishers.

An observable has no demand: it pushes. `from_observable` is therefore `Flux.create` fed by
an observer: a bounded buffer for what was pushed ahead of demand and an `Overflow` policy
when it is full; every drop is counted exactly (``on_dropped`` sees each dropped item). `to_observable` subscribes with a
bounded prefetch window and replenishes it as the observer is called.

Backpressure: `from_observable`: special, the `Overflow` policy; `to_observable`:
requests ``prefetch`` and replenishes in batches (observers cannot push back).
Errors: pass through both ways; an overflow with ``then="error"`` fails the stream with
`MissingBackpressureError` after the buffered items and disposes the observable; a ``None``
item fails it with `NullSignalError`.
Loop: `from_observable` belongs to the loop it was subscribed on; items an observable pushes
from another thread (an RxPY scheduler) are handed over to that loop in order.

Needs the ``interop`` extra: ``pip install 'reactive_aio[interop]'``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

try:
    import reactivex
    from reactivex.disposable import Disposable as RxDisposable
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "reactive_aio.adapters.rx needs reactivex: pip install 'reactive_aio[interop]'"
    ) from exc

from .._core import NullSignalError, Overflow as Overflow, Publisher
from .._flux import Flux
from .._sinks._aiter import DEFAULT_PREFETCH
from .._sources._create import DEFAULT_OVERFLOW, FluxSink

__all__ = ("Overflow", "from_observable", "to_observable")

T = TypeVar("T")


def from_observable(
    observable: Any,
    *,
    overflow: Overflow = DEFAULT_OVERFLOW,
    on_dropped: Callable[[T], object] | None = None,
) -> Flux[T]:
    """An RxPY observable as a `Flux`: `Flux.create` fed by an observer, so what the
    observable pushes ahead of demand meets the *overflow* policy.

    Args:
        observable: a ``reactivex.Observable``; subscribed once per subscriber, disposed when
            the subscriber cancels or the stream fails by overflow.
        overflow: the buffer and what to do when it is full: ``Overflow.BUFFER(n,
            then="error" | "drop_oldest" | "drop_latest")``, ``Overflow.DROP``,
            ``Overflow.LATEST``, ``Overflow.ERROR``; default a buffer of 256, then error.
        on_dropped: called with every dropped item (a raising callback fails the stream).

    Backpressure: special; the *overflow* policy.
    """

    def emitter(sink: FluxSink[T]) -> None:
        disposed = False
        disposable: Any = None

        def dispose() -> None:
            nonlocal disposed
            disposed = True
            if disposable is not None:
                disposable.dispose()

        def on_next(item: T) -> None:
            if item is None:
                sink.error(NullSignalError("rule 2.13: the observable emitted None"))
                dispose()
            else:
                sink.next(item)

        sink.on_cancel(dispose)
        disposable = observable.subscribe(
            on_next=on_next, on_error=sink.error, on_completed=sink.complete
        )
        if disposed:  # cancelled (or failed) while the observable emitted synchronously
            disposable.dispose()

    return Flux.create(emitter, overflow=overflow, on_dropped=on_dropped)


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
