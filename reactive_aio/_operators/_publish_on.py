"""``publish_on``: an async boundary; downstream signals run in a drain on the loop.

Backpressure: buffer(buffer_size); upstream is asked for ``buffer_size`` items up front and
replenished in batches of 3/4 of the buffer as the subscriber takes them. Downstream demand
is served from the buffer.
Errors: an upstream error (or completion) is delivered after the items buffered before it;
an upstream that sends more than requested fails with `MissingBackpressureError`.
Loop: needs a running loop at subscribe time; upstream ``on_next`` only appends to the buffer
and schedules one drain callback per batch (never a task or future per item).
Fusion: a subscriber that is an async boundary itself (the buffer behind ``async for``) takes
this one's place: it is subscribed to the source with this prefetch and makes its requests
from a loop callback, so each item crosses one buffer instead of two (`fuse_boundary`); over
a source whose items are at hand (``range``, ``from_iterable``, maps over them) each request
is pulled in one step instead of an ``on_next`` per item, still from a loop callback. A
``batch`` right after it, read by ``async for``, is slices of that one buffer (`Batching`).
Any other subscriber (``subscribe``, ``reduce``) gets this boundary's own buffer, which such a
source also fills a request at a time (`ItemsSubscriber`).
"""

from __future__ import annotations

from typing import Generic, TypeVar, final

import attrs

from .._core import (
    AsyncBoundary,
    BufferDrain,
    ItemsSubscriber,
    Publisher,
    Subscriber,
    current_loop,
    fuse_boundary,
    replenish_threshold,
    require_not_none,
    subscribe_pulled,
)

__all__ = ("PublishOnPublisher",)

T = TypeVar("T")


@final
@attrs.frozen
class PublishOnPublisher(Publisher[T], AsyncBoundary, Generic[T]):
    """What `Flux.publish_on` returns."""

    source: Publisher[T]
    buffer_size: int = 256

    def __attrs_post_init__(self) -> None:
        if self.buffer_size <= 0:
            raise ValueError(f"publish_on buffer_size must be > 0, got {self.buffer_size}")

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        size = self.buffer_size
        replenish = replenish_threshold(size)
        if fuse_boundary(subscriber, self.source, size, replenish):
            return
        drain = _PublishOnDrain[T](
            subscriber, asynchronous=True, prefetch=size, replenish=replenish, what="publish_on"
        )
        if current_loop() is None:
            drain.start()
            drain.finish(RuntimeError("publish_on needs a running event loop"))
            return
        drain.start()
        if not subscribe_pulled(drain, self.source):
            self.source.subscribe(drain)


@final
@attrs.define(eq=False)
class _PublishOnDrain(BufferDrain[T], ItemsSubscriber[T]):
    """The boundary's buffer, which takes a source at hand's items a request at a time."""
