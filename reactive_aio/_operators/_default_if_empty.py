"""``default_if_empty``: a stream that completes without items emits *value* instead.

Backpressure: pass-through; the value waits for demand if none is outstanding.
Errors: upstream errors pass through (no value then).
"""

from __future__ import annotations

from typing import Generic, TypeVar, final

import attrs

from .._core import ArbiterSubscriber, Publisher, Subscriber, require_not_none
from .._sources._from_iterable import IterablePublisher

__all__ = ("DefaultIfEmptyPublisher",)

T = TypeVar("T")


@final
@attrs.frozen
class DefaultIfEmptyPublisher(Publisher[T], Generic[T]):
    """What `Flux.default_if_empty` returns."""

    source: Publisher[T]
    value: T

    def __attrs_post_init__(self) -> None:
        require_not_none(self.value, "2.13", "default_if_empty's value")

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(_DefaultIfEmptySubscriber(subscriber, value=self.value))


@final
@attrs.define(eq=False)
class _DefaultIfEmptySubscriber(ArbiterSubscriber[T]):
    _value: T = attrs.field(kw_only=True, alias="value")
    _empty: bool = attrs.field(default=True, init=False)

    def on_next(self, item: T) -> None:
        self._empty = False
        super().on_next(item)

    def on_complete(self) -> None:
        if self._empty:
            self._empty = False  # the value's own completion ends the stream
            self._switch_to(IterablePublisher((self._value,)))
        else:
            self._finish_complete()
