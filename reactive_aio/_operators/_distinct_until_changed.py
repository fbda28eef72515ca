"""``distinct_until_changed``: drop items whose key equals the previous item's key.

Keys are compared with ``==``, or with ``comparer(previous_key, key)`` (true: the same), as
Reactor's ``distinctUntilChanged(keySelector, keyComparator)`` and RxPY's ``comparer``.

Backpressure: pass-through; each dropped item is replaced by a ``request(1)`` upstream.
Errors: if *key* (or the comparison) raises, upstream is cancelled first, then ``on_error``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, final

import attrs

from .._core import DroppingSubscriber, Publisher, Subscriber, require_not_none

__all__ = ("DistinctUntilChangedPublisher",)

T = TypeVar("T")

_NOTHING: Any = object()


@final
@attrs.frozen
class DistinctUntilChangedPublisher(Publisher[T], Generic[T]):
    """What `Flux.distinct_until_changed` returns."""

    source: Publisher[T]
    key: Callable[[T], object] | None = None
    comparer: Callable[[Any, Any], object] | None = None

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(
            _DistinctUntilChangedSubscriber(subscriber, key=self.key, comparer=self.comparer)
        )


@final
@attrs.define(eq=False)
class _DistinctUntilChangedSubscriber(DroppingSubscriber[T, T]):
    _key: Callable[[T], object] | None = attrs.field(kw_only=True, alias="key")
    _comparer: Callable[[Any, Any], object] | None = attrs.field(kw_only=True, alias="comparer")
    _last: object = attrs.field(default=_NOTHING, init=False)

    def on_next(self, item: T) -> None:
        try:
            key = item if self._key is None else self._key(item)
            last = self._last
            comparer = self._comparer
            same = last is not _NOTHING and bool(
                key == last if comparer is None else comparer(last, key)
            )
        except Exception as exc:
            self._fail(exc)
            return
        self._last = key
        if same:
            self._drop()
        else:
            self._next(item)
