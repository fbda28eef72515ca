"""``window_while``: windows of consecutive items for which *predicate* is true.

An item failing the predicate closes the open window and is dropped (Reactor's
``windowWhile``); several failing items in a row open no empty windows. Each window is a
`UnicastBuffer` with its own demand, as those of ``window(count)``.

Backpressure: as ``window_until``: upstream is asked for one item at a time, once the open
window's subscriber has taken the previous one or, with no window open, once the outer
subscriber has demand; a window buffers at most one item. Cancelling the outer stream stops
new windows; upstream is cancelled once the open window is also done.
Errors: an upstream error goes to the open window (after its buffered items) and then to the
outer subscriber; if *predicate* raises, upstream is cancelled first and the error goes the
same way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar, final

import attrs

from .._core import Publisher, Subscriber, require_not_none
from ._window_until import ADD, CLOSE_DROP, CutWindows

__all__ = ("WindowWhilePublisher",)

T = TypeVar("T")
W = TypeVar("W")


@final
@attrs.frozen
class WindowWhilePublisher(Publisher[W], Generic[T, W]):
    """What `Flux.window_while` returns; *wrap* turns each window into what is emitted."""

    source: Publisher[T]
    predicate: Callable[[T], object]
    wrap: Callable[[Publisher[T]], W]

    def subscribe(self, subscriber: Subscriber[W]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(
            _WindowWhileSubscriber[T, W](
                subscriber, predicate=self.predicate, wrap=self.wrap, what="window_while"
            )
        )


@final
@attrs.define(eq=False)
class _WindowWhileSubscriber(CutWindows[T, W], Generic[T, W]):
    _predicate: Callable[[T], object] = attrs.field(kw_only=True, alias="predicate")

    def _cut(self, item: T) -> int:
        return ADD if self._predicate(item) else CLOSE_DROP
