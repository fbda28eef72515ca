"""``batch``: whatever arrived while downstream was busy, as one list.

The fast way to hand items between tasks: ``async for chunk in flux.publish_on().batch(256)``
costs the reader one resumption per list instead of one per item. Unlike ``buffer(count)`` it
never waits for a list to fill: items that arrive while the subscriber has demand go out at the
next turn of the loop (everything that arrived in the same turn together), and while it has none
they accumulate, up to *max_items*, into the list it gets when it asks.

Backpressure: upstream is asked for *max_items* up front and re-asked, three quarters of that at
a time, as items leave in lists, so at most *max_items* are held; one list per requested item.
Errors: an upstream error (or completion) is delivered after the lists held before it; an
upstream that sends more than requested fails with `MissingBackpressureError`.
Loop: lists go out from loop callbacks (one per turn that received items), never on the
upstream's stack; without a running loop, each item goes out at once, as a list of one.
Fusion: read by ``async for`` right after an async boundary (``publish_on``), or over a source
whose items are at hand, it subscribes nothing: the reader's buffer holds the items (at most
the boundary's ``buffer_size``, or *max_items*) and each list is a slice of what it holds when
the reader comes back for more (`Batching`), so no item costs a signal of its own.
"""

from __future__ import annotations

from typing import Generic, TypeVar, final

import attrs

from .._core import (
    Batching,
    BufferDrain,
    Publisher,
    Subscriber,
    current_loop,
    hand_over,
    require_not_none,
)

__all__ = ("BatchPublisher",)

T = TypeVar("T")


@final
@attrs.frozen
class BatchPublisher(Publisher[list[T]], Batching, Generic[T]):
    """What `Flux.batch` returns."""

    source: Publisher[T]
    max_items: int

    def __attrs_post_init__(self) -> None:
        if self.max_items <= 0:
            raise ValueError(f"batch max_items must be > 0, got {self.max_items}")

    def batched(self) -> tuple[Publisher[T], int]:
        return self.source, self.max_items

    def subscribe(self, subscriber: Subscriber[list[T]]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        drain = _BatchDrain[T](subscriber, asynchronous=True, prefetch=self.max_items)
        drain.start()
        self.source.subscribe(drain)


@final
@attrs.define(eq=False)
class _BatchDrain(BufferDrain[list[T]], Generic[T]):
    """Upstream items join the list at the back of the queue; the drain hands out lists."""

    _held: int = attrs.field(default=0, init=False)
    """Items in the queued lists."""

    def on_next(self, item: T) -> None:
        if current_loop() is not self._loop and hand_over(self._loop, self.on_next, item):
            return
        if self._finished or self._done:
            return
        window = self._prefetch
        assert window is not None
        if self._held >= window:
            self._overflowed(window)
            return
        self._held += 1
        queue = self._queue
        if queue:
            queue[-1].append(item)  # (the list going out is off the queue already)
        else:
            queue.append([item])
        self.signal()

    def _consumed(self, count: int) -> None:
        # *count* lists went out: the upstream's window counts the items they held.
        held = sum(map(len, self._queue))  # (at most the list that started since)
        items, self._held = self._held - held, held
        super()._consumed(items)
