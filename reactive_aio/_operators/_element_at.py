"""``element_at``: only the item at position *index*, then completion.

Backpressure: the first downstream request asks upstream for exactly ``index + 1`` items;
upstream is cancelled once the item arrived.
Errors: a stream too short ends with the *default* if given, else with `IndexError`;
upstream errors pass through.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar, final

import attrs

from .._core import OperatorSubscriber, Publisher, Subscriber, require_not_none

__all__ = ("NO_DEFAULT", "ElementAtPublisher")

T = TypeVar("T")

NO_DEFAULT: Any = object()
"""Marks an ``element_at`` without a default."""


@final
@attrs.frozen
class ElementAtPublisher(Publisher[T], Generic[T]):
    """What `Flux.element_at` returns."""

    source: Publisher[T]
    index: int
    default: T = NO_DEFAULT

    def __attrs_post_init__(self) -> None:
        if self.index < 0:
            raise ValueError(f"element_at index must be >= 0, got {self.index}")
        if self.default is None:
            raise TypeError("rule 2.13: element_at's default must not be None")

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(
            _ElementAtSubscriber(subscriber, index=self.index, default=self.default)
        )


@final
@attrs.define(eq=False)
class _ElementAtSubscriber(OperatorSubscriber[T, T]):
    _index: int = attrs.field(kw_only=True, alias="index")
    _default: T = attrs.field(kw_only=True, alias="default")
    _position: int = attrs.field(default=0, init=False)
    _asked: bool = attrs.field(default=False, init=False)

    def on_next(self, item: T) -> None:
        position = self._position
        self._position = position + 1
        if position == self._index:
            self._next(item)
            self._complete_early()

    def on_complete(self) -> None:
        if self._done:
            return
        # The request of index + 1 items was not exhausted, so downstream demand is still open.
        if self._default is not NO_DEFAULT:
            self._next(self._default)
            super().on_complete()
        else:
            self._upstream = None
            self._finish().on_error(
                IndexError(
                    f"element_at({self._index}): the stream ended after {self._position} items"
                )
            )

    def _request(self, n: int) -> None:
        if self._done:
            return
        if type(n) is not int or n <= 0:
            super()._request(n)  # upstream signals the rule 3.9 error
        elif not self._asked:
            self._asked = True
            super()._request(self._index + 1)
