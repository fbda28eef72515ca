"""``window_until_changed``: windows of consecutive items with the same key.

An item whose ``key(item)`` (the item itself without *key*) differs (``!=``) from the previous
item's closes the open window and opens the next one (Reactor's ``windowUntilChanged``). Each
window is a `UnicastBuffer` with its own demand, as those of ``window(count)``.

Backpressure: as ``window_until``: upstream is asked for one item at a time, once the open
window's subscriber has taken the previous one or, with no window open, once the outer
subscriber has demand; a window buffers at most one item and one opened by a key change
without outer demand is held until requested. Cancelling the outer stream stops new windows;
upstream is cancelled once the open window is also done.
Errors: an upstream error goes to the open window (after its buffered items) and then to the
outer subscriber; if *key* raises, upstream is cancelled first and the error goes the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar, final

import attrs

from .._core import Publisher, Subscriber, require_not_none
from ._window_until import ADD, CLOSE_ADD, CutWindows

__all__ = ("WindowUntilChangedPublisher",)

T = TypeVar("T")
W = TypeVar("W")

_NONE = object()
"""No item seen yet."""


@final
@attrs.frozen
class WindowUntilChangedPublisher(Publisher[W], Generic[T, W]):
    """What `Flux.window_until_changed` returns; *wrap* turns each window into what is emitted."""

    source: Publisher[T]
    key: Callable[[T], object] | None
    wrap: Callable[[Publisher[T]], W]

    def subscribe(self, subscriber: Subscriber[W]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(
            _WindowUntilChangedSubscriber[T, W](
                subscriber, key=self.key, wrap=self.wrap, what="window_until_changed"
            )
        )


@final
@attrs.define(eq=False)
class _WindowUntilChangedSubscriber(CutWindows[T, W], Generic[T, W]):
    _key: Callable[[T], object] | None = attrs.field(kw_only=True, alias="key")
    _last: object = attrs.field(default=_NONE, init=False)

    def _cut(self, item: T) -> int:
        key = item if self._key is None else self._key(item)
        last, self._last = self._last, key
        return ADD if last is _NONE or last == key else CLOSE_ADD
