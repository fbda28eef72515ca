"""``window``: windows of *count* items, a new one every *skip* items, each a publisher.

``skip`` defaults to *count* (consecutive windows); ``skip > count`` leaves gaps, ``skip <
count`` gives overlapping windows (an item goes to each window it belongs to). Every window is
a `UnicastBuffer` with its own demand: it accepts one subscriber (a second one gets
``on_error``) and buffers its items until they are requested. A window opens with its first
item, so there is never an empty window.

Backpressure: ``request(n)`` windows asks upstream for the items they need, as ``buffer(count,
skip)`` does: ``count + (n - 1) * skip`` the first time, ``n * skip`` after that (saturated);
a window therefore never buffers more than *count* items, however slowly it is consumed. With
overlaps, the windows that open before they are requested (at most ``ceil(count / skip) - 1``)
are held, with their items, until the next ``request``. Cancelling the outer stream stops new
windows (held ones are dropped); upstream is cancelled once every window being filled is also
done (completed or cancelled by its subscriber). Items of a window whose subscriber cancelled
are dropped.
Errors: an upstream error goes to the open windows (after their buffered items) and to the
outer subscriber.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar, final

import attrs

from .._core import (
    BufferDrain,
    Publisher,
    Subscriber,
    Subscription,
    UnicastBuffer,
    add_demand,
    require_not_none,
)

__all__ = ("WindowPublisher", "WindowsOperator")

T = TypeVar("T")
W = TypeVar("W")


@final
@attrs.frozen
class WindowPublisher(Publisher[W], Generic[T, W]):
    """What `Flux.window` returns; *wrap* turns each window publisher into what is emitted."""

    source: Publisher[T]
    count: int
    skip: int
    wrap: Callable[[Publisher[T]], W]

    def __attrs_post_init__(self) -> None:
        if self.count <= 0 or self.skip <= 0:
            raise ValueError(f"window count and skip must be > 0, got {self.count}, {self.skip}")

    def subscribe(self, subscriber: Subscriber[W]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(
            _WindowSubscriber[T, W](
                subscriber, count=self.count, skip=self.skip, wrap=self.wrap, what="window"
            )
        )


@attrs.define(eq=False)
class WindowsOperator(BufferDrain[W], Generic[T, W]):
    """Hands out `UnicastBuffer` windows through its own buffer, so a window that opens
    without outer demand is held until requested. Subclasses implement ``on_next(item: T)``
    with `_open_window`, `_close_window` and the windows in ``_open`` (oldest first)."""

    _wrap: Callable[[Publisher[T]], W] = attrs.field(kw_only=True, alias="wrap")
    _open: deque[UnicastBuffer[T]] = attrs.field(factory=deque, init=False)
    """Windows being filled, oldest first."""
    _held: deque[UnicastBuffer[T]] = attrs.field(factory=deque, init=False)
    """Windows opened but not yet emitted (in the drain's queue, in the same order)."""

    def _open_window(self, window: UnicastBuffer[T]) -> None:
        self._open.append(window)
        self._held.append(window)
        self.push(self._wrap(window))

    def _close_window(self, error: BaseException | None = None) -> None:
        """End the oldest open window."""
        self._open.popleft().end(error)

    def _filling(self) -> bool:
        """Some window being filled may still take items; once the outer stream is cancelled,
        an item that would open a new window cancels upstream instead."""
        if self._done and not any(not window.done for window in self._open):
            self._drop_upstream()
            return False
        return True

    def _subscribed(self, upstream: Subscription) -> None:
        self.start()  # downstream's demand is forwarded as it comes

    def _consumed(self, count: int) -> None:
        held = self._held
        for _ in range(count):
            held.popleft()

    def _ending(self, error: BaseException | None) -> None:
        while self._open:
            self._close_window(error)
        self.finish(error)

    def _window_done(self) -> None:
        """A window ended or its subscriber cancelled: the last one of a cancelled outer
        stream lets upstream go."""
        if self._done:
            self._filling()

    def _release(self) -> None:
        held, self._held = self._held, deque()
        for window in held:  # nobody will ever see them
            window.discard()
        self._queue.clear()
        if not self._finished and any(not window.done for window in self._open):
            return  # cancelled: upstream still feeds a window someone consumes until it is done
        while self._open:  # the stream failed on its own (too many windows held): all go
            self._close_window()
        super()._release()


@final
@attrs.define(eq=False)
class _WindowSubscriber(WindowsOperator[T, W], Generic[T, W]):
    _count: int = attrs.field(kw_only=True, alias="count")
    _skip: int = attrs.field(kw_only=True, alias="skip")
    _position: int = attrs.field(default=0, init=False)
    _oldest: int = attrs.field(default=0, init=False)
    """The position of the oldest open window's first item."""
    _first_request: bool = attrs.field(default=True, init=False)

    def on_next(self, item: T) -> None:
        if item is None:
            require_not_none(item, "2.13", "on_next's item")
        if self._upstream_done:
            return
        position = self._position
        self._position = position + 1
        if position % self._skip == 0:
            if not self._filling():
                return
            if not self._done:
                if not self._open:
                    self._oldest = position
                self._open_window(UnicastBuffer[T](on_done=self._window_done))
        open_windows = self._open
        if not open_windows:
            return  # in the gap between windows
        for window in open_windows:
            window.push(item)
        if position - self._oldest + 1 == self._count:
            self._close_window()
            self._oldest += self._skip  # where the next one (if open: they overlap) began

    def _requested_more(self, n: int) -> None:
        skip = self._skip
        ask = self._count + (n - 1) * skip if self._first_request else n * skip
        self._first_request = False
        upstream = self._upstream
        if upstream is not None and not self._upstream_done:
            upstream.request(add_demand(0, ask))
