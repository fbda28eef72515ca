"""``scan``: emit every intermediate result of folding the items.

With a seed, the first emission is ``fn(seed, first)``; the seed itself is not emitted (as in
RxPY; prepend it with ``start_with`` when wanted). Without a seed the first item starts the
accumulator and is emitted as is.

Deliberate choice: Reactor's ``scan(initial, fn)`` emits the seed first; here one emission per
upstream item holds with or without a seed (``scan`` stays pass-through and never emits
without demand for an item), the seed is usually a neutral element nobody wants to see (0 of
a running total), and an empty source stays empty. ``flux.scan(fn, seed).start_with(seed)``
is Reactor's form.

Backpressure: pass-through; one emission per upstream item.
Errors: if *fn* raises or returns ``None``, upstream is cancelled first, then ``on_error``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, final

import attrs

from .._core import (
    NullSignalError,
    OperatorSubscriber,
    Publisher,
    Subscriber,
    require_not_none,
    short_repr,
)

__all__ = ("NO_SEED", "ScanPublisher")

T = TypeVar("T")
A = TypeVar("A")

NO_SEED: Any = object()
"""Marks a scan whose first item is the initial accumulator."""


@final
@attrs.frozen
class ScanPublisher(Publisher[A], Generic[T, A]):
    """What `Flux.scan` returns."""

    source: Publisher[T]
    fn: Callable[[A, T], A]
    seed: A = NO_SEED

    def subscribe(self, subscriber: Subscriber[A]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(_ScanSubscriber(subscriber, fn=self.fn, acc=self.seed))


@final
@attrs.define(eq=False)
class _ScanSubscriber(OperatorSubscriber[T, A]):
    _fn: Callable[[A, T], A] = attrs.field(kw_only=True, alias="fn")
    _acc: A = attrs.field(kw_only=True, alias="acc")

    def on_next(self, item: T) -> None:
        acc = self._acc
        if acc is NO_SEED:
            value: Any = item
        else:
            try:
                value = self._fn(acc, item)
            except Exception as exc:
                self._fail(exc)
                return
            if value is None:
                self._fail(
                    NullSignalError(
                        f"rule 2.13: scan's function returned None for {short_repr(item)}"
                    )
                )
                return
        self._acc = value
        self._next(value)
