"""``expand`` and ``expand_deep``: the source's items and, recursively, what *fn* makes of them.

``fn(item)`` returns the item's children (a publisher, an async iterable or an awaitable);
every child is emitted and expanded in turn, until *fn* returns empty streams. ``expand`` is
breadth-first (Reactor's ``expand``): the source's items, then the children of each in order,
then the grandchildren, …; it holds the items whose children are still to come, so memory
grows with the widest level. ``expand_deep`` is depth-first (Reactor's ``expandDeep``): each
item is followed by its whole subtree before its next sibling; it holds one open stream per
level, and each level nests one more subscription on the stack. Both call *fn* for an item
only once the item was delivered.

Backpressure: downstream demand is honoured exactly. ``expand`` plays one stream at a time
and asks it for the demand still outstanding; ``expand_deep`` asks each level, as
``concat_map`` does, for one item at a time.
Errors: an error of any stream, or a raising *fn*, ends the expansion with ``on_error``
(the open streams are cancelled).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar, final

import attrs

from .._core import ArbiterSubscriber, Publisher, Subscriber, require_not_none
from .._sources._defer import DeferPublisher
from ._as_publisher import as_publisher
from ._concat_map import ConcatMapPublisher
from ._start_with import StartWithPublisher

__all__ = ("ExpandDeepPublisher", "ExpandPublisher")

T = TypeVar("T")


@final
@attrs.frozen
class ExpandPublisher(Publisher[T], Generic[T]):
    """What `Flux.expand` returns."""

    source: Publisher[T]
    fn: Callable[[T], object]

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        _BreadthFirstSubscriber(subscriber, fn=self.fn).begin(self.source)


@final
@attrs.define(eq=False)
class _BreadthFirstSubscriber(ArbiterSubscriber[T]):
    """Plays the source, then the children of every item emitted, in emission order."""

    _fn: Callable[[T], object] = attrs.field(kw_only=True, alias="fn")
    _parents: deque[T] = attrs.field(factory=deque, init=False)
    """Items emitted whose children are still to be played."""

    def begin(self, source: Publisher[T]) -> None:
        self.start()
        self._switch_to(source)

    def on_next(self, item: T) -> None:
        self._parents.append(item)
        super().on_next(item)

    def on_complete(self) -> None:
        parents = self._parents
        if not parents or self.done:
            self._finish_complete()
            return
        try:
            children = as_publisher(self._fn(parents.popleft()), "expand")
        except Exception as exc:
            self._finish_error(exc)
            return
        self._switch_to(children)

    def _on_end(self) -> None:
        self._parents.clear()


@final
@attrs.frozen
class ExpandDeepPublisher(Publisher[T], Generic[T]):
    """What `Flux.expand_deep` returns: every item, then the expansion of its children."""

    source: Publisher[T]
    fn: Callable[[T], object]
    prefetch: int

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        fn, prefetch = self.fn, self.prefetch

        def expansion(item: T) -> Publisher[T]:
            return ExpandDeepPublisher(as_publisher(fn(item), "expand_deep"), fn, prefetch)

        def subtree(item: T) -> Publisher[T]:
            # fn runs once the item was delivered, as in `expand`
            children = DeferPublisher(lambda: expansion(item))
            return StartWithPublisher(children, (item,))

        ConcatMapPublisher(self.source, subtree, 1, prefetch, False).subscribe(subscriber)
