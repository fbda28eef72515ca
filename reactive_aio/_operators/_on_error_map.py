"""``on_error_map``: replace an upstream error with what a function makes of it.

Backpressure: pass-through.
Errors: if the function raises, its exception is signalled instead (the original becomes its
``__context__``); a result that is not an exception is a `TypeError`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar, final

import attrs

from .._core import OperatorSubscriber, Publisher, Subscriber, require_not_none, short_repr

__all__ = ("OnErrorMapPublisher",)

T = TypeVar("T")


@final
@attrs.frozen
class OnErrorMapPublisher(Publisher[T], Generic[T]):
    """What `Flux.on_error_map` returns."""

    source: Publisher[T]
    fn: Callable[[BaseException], BaseException]

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(_OnErrorMapSubscriber(subscriber, fn=self.fn))


@final
@attrs.define(eq=False)
class _OnErrorMapSubscriber(OperatorSubscriber[T, T]):
    _fn: Callable[[BaseException], BaseException] = attrs.field(kw_only=True, alias="fn")

    def on_next(self, item: T) -> None:
        self._next(item)

    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        if not self._done:
            try:
                mapped: object = self._fn(error)
                if not isinstance(mapped, BaseException):
                    raise TypeError(
                        f"on_error_map's function returned {short_repr(mapped)}, not an exception"
                    )
            except Exception as exc:
                mapped = exc
            if mapped is not error and mapped.__context__ is None:
                mapped.__context__ = error
            error = mapped
        super().on_error(error)
