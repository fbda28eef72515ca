"""``map_skip_errors``: ``map`` whose bad elements are skipped instead of failing the stream.

An element is bad when *fn* raises an ``Exception`` or returns ``None``. It is dropped and
reported with ``on_dropped(item, error)``; without *on_dropped* it is logged as a warning to
the ``reactive_aio`` logger, so nothing is lost silently. Use plain ``map`` to stop at the
first bad element.

Backpressure: pass-through; each dropped element is replaced by a ``request(1)`` upstream.
Errors: if *on_dropped* itself raises, upstream is cancelled first, then ``on_error`` with
that exception (the stream stops).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar, final

import attrs

from .._core import (
    DroppingSubscriber,
    NullSignalError,
    Publisher,
    Subscriber,
    logger,
    require_not_none,
    short_repr,
)

__all__ = ("MapSkipErrorsPublisher",)

T = TypeVar("T")
R = TypeVar("R")


@final
@attrs.frozen
class MapSkipErrorsPublisher(Publisher[R], Generic[T, R]):
    """What `Flux.map_skip_errors` returns."""

    source: Publisher[T]
    fn: Callable[[T], R]
    on_dropped: Callable[[T, Exception], object] | None = None

    def subscribe(self, subscriber: Subscriber[R]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(
            _MapSkipErrorsSubscriber(subscriber, fn=self.fn, on_dropped=self.on_dropped)
        )


@final
@attrs.define(eq=False)
class _MapSkipErrorsSubscriber(DroppingSubscriber[T, R]):
    _fn: Callable[[T], R] = attrs.field(kw_only=True, alias="fn")
    _on_dropped: Callable[[T, Exception], object] | None = attrs.field(
        kw_only=True, alias="on_dropped"
    )

    def on_next(self, item: T) -> None:
        try:
            value = self._fn(item)
        except Exception as exc:
            self._dropped(item, exc)
            return
        if value is None:
            self._dropped(
                item,
                NullSignalError(f"rule 2.13: the function returned None for {short_repr(item)}"),
            )
            return
        self._next(value)

    def _dropped(self, item: T, error: Exception) -> None:
        on_dropped = self._on_dropped
        if on_dropped is None:
            logger.warning("map_skip_errors dropped %r: %r", item, error, exc_info=error)
        else:
            try:
                on_dropped(item, error)
            except Exception as exc:
                self._fail(exc)
                return
        self._drop()
