"""``window_until``: windows of items, each closed by an item for which *predicate* is true.

The closing item ends its window (Reactor's ``windowUntil``); with ``cut_before=True`` it
opens the next window instead. A window opens with its first item, so there is never an empty
window; each is a `UnicastBuffer` with its own demand, as those of ``window(count)``.

Backpressure: upstream is asked for one item at a time, and only for an item that has
somewhere to go: the next one once the open window's subscriber has taken the previous one
(right away if it cancelled: its items are dropped), or, with no window open, once the outer
subscriber has demand for the window that item opens. A window therefore buffers at most one
item, and a window opened without outer demand (by a cutting item) is held until requested.
Cancelling the outer stream stops new windows; upstream is cancelled once the open window is
also done.
Errors: an upstream error goes to the open window (after its buffered items) and then to the
outer subscriber; if *predicate* raises, upstream is cancelled first and the error goes the
same way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar, final

import attrs

from .._core import Publisher, Subscriber, UnicastBuffer, require_not_none
from ._window import WindowsOperator

__all__ = ("ADD", "ADD_CLOSE", "CLOSE_ADD", "CLOSE_DROP", "CutWindows", "WindowUntilPublisher")

T = TypeVar("T")
W = TypeVar("W")

ADD = 0
"""The item goes into the open window (opening one if none is)."""
ADD_CLOSE = 1
"""The item goes into the open window, which it closes."""
CLOSE_ADD = 2
"""The item closes the open window and opens the next one."""
CLOSE_DROP = 3
"""The item closes the open window and is dropped."""


@final
@attrs.frozen
class WindowUntilPublisher(Publisher[W], Generic[T, W]):
    """What `Flux.window_until` returns; *wrap* turns each window into what is emitted."""

    source: Publisher[T]
    predicate: Callable[[T], object]
    cut_before: bool
    wrap: Callable[[Publisher[T]], W]

    def subscribe(self, subscriber: Subscriber[W]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(
            _WindowUntilSubscriber[T, W](
                subscriber,
                predicate=self.predicate,
                cut_before=self.cut_before,
                wrap=self.wrap,
                what="window_until",
            )
        )


@attrs.define(eq=False)
class CutWindows(WindowsOperator[T, W], Generic[T, W]):
    """One window open at a time, cut where `_cut` says, upstream asked one item at a time
    (see the module docstring)."""

    _asked: bool = attrs.field(default=False, init=False)
    """An item was asked upstream and has not arrived (or is being placed)."""
    _unconsumed: int = attrs.field(default=0, init=False)
    """Items pushed to the open window that its subscriber has not taken."""
    _serial: int = attrs.field(default=0, init=False)
    """Which window is the open one, for the consumption reports of older ones."""

    def _cut(self, item: T) -> int:
        """`ADD`, `ADD_CLOSE`, `CLOSE_ADD` or `CLOSE_DROP` for *item*; may raise."""
        raise NotImplementedError

    def on_next(self, item: T) -> None:
        if item is None:
            require_not_none(item, "2.13", "on_next's item")
        if self._upstream_done:
            return
        self._asked = True  # what placing the item provokes asks nothing: it is asked below
        try:
            cut = self._cut(item)
        except Exception as exc:
            self._drop_upstream()
            self._ending(exc)
            return
        if cut >= CLOSE_ADD and self._open:
            self._close_window()
        if cut != CLOSE_DROP:
            if not self._open:
                if not self._filling():
                    return
                self._new_window()
            self._unconsumed += 1
            self._open[0].push(item)
            if cut == ADD_CLOSE:
                self._close_window()
        self._asked = False
        self._pull()

    def _new_window(self) -> None:
        serial = self._serial = self._serial + 1
        self._unconsumed = 0

        def consumed(count: int) -> None:
            if serial == self._serial:
                self._unconsumed -= count
                self._pull()

        self._open_window(UnicastBuffer[T](on_consumed=consumed, on_done=self._window_done))

    def _pull(self) -> None:
        """Ask upstream for the next item if it has somewhere to go."""
        upstream = self._upstream
        if upstream is None or self._asked or self._upstream_done or self._held:
            return
        if self._open:
            if self._unconsumed and not self._open[0].done:
                return  # the window's subscriber has not taken the last item yet
        elif not self._requested:
            return  # the next item opens a window nobody asked for yet
        self._asked = True
        upstream.request(1)

    def _requested_more(self, n: int) -> None:
        self._pull()

    def _consumed(self, count: int) -> None:
        super()._consumed(count)
        self._pull()

    def _window_done(self) -> None:
        super()._window_done()
        self._pull()


@final
@attrs.define(eq=False)
class _WindowUntilSubscriber(CutWindows[T, W], Generic[T, W]):
    _predicate: Callable[[T], object] = attrs.field(kw_only=True, alias="predicate")
    _cut_before: bool = attrs.field(kw_only=True, alias="cut_before")

    def _cut(self, item: T) -> int:
        if not self._predicate(item):
            return ADD
        return CLOSE_ADD if self._cut_before else ADD_CLOSE
