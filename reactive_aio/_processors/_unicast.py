"""`UnicastProcessor`: a buffer between one producer and exactly one subscriber.

Backpressure: buffer(buffer_size); upstream is asked for ``buffer_size`` items up front and
replenished by 3/4 of the buffer as the subscriber takes them; items arriving before the
subscriber wait in the buffer.
Errors: upstream errors and completion reach the subscriber after the buffered items (also when
they arrived before it subscribed); more items than requested (or than the buffer holds, when
``on_next`` is called directly) fail with `MissingBackpressureError`; a second subscriber
gets ``on_subscribe`` then ``on_error(ProtocolViolationError)``; an upstream error after
termination (a second ``on_error``, or one after ``on_complete``) is reported (rule 1.7).
Loop: ``on_next`` and the terminal signals from other threads are handed over to the loop the
processor was created (or first subscribed) on, in order.
"""

from __future__ import annotations

from typing import Generic, TypeVar, final

import attrs

from .._core import (
    BufferDrain,
    LoopBound,
    Processor,
    ProtocolViolationError,
    Subscriber,
    Subscription,
    refuse,
    replenish_threshold,
    require_not_none,
)

__all__ = ("UnicastProcessor",)

T = TypeVar("T")


@final
@attrs.define(eq=False)
class UnicastProcessor(Processor[T, T], LoopBound, Generic[T]):
    """A processor for a single subscriber, with a bounded buffer."""

    buffer_size: int = 256
    _drain: BufferDrain[T] = attrs.field(init=False)
    _subscribed: bool = attrs.field(default=False, init=False)

    def __attrs_post_init__(self) -> None:
        if self.buffer_size <= 0:
            raise ValueError(f"buffer_size must be > 0, got {self.buffer_size}")
        size = self.buffer_size
        # The drain exists before its subscriber: it buffers (and holds a terminal signal)
        # until subscribe() attaches the subscriber and starts it.
        self._drain = BufferDrain[T](
            None, prefetch=size, replenish=replenish_threshold(size), what="UnicastProcessor"
        )

    @property
    def buffered(self) -> int:
        """Items waiting for the subscriber's demand."""
        return self._drain.buffered

    def on_subscribe(self, subscription: Subscription) -> None:
        self._bind()
        self._drain.on_subscribe(subscription)

    def on_next(self, item: T) -> None:
        if item is None:
            require_not_none(item, "2.13", "on_next's item")
        self._drain.on_next(item)

    def on_error(self, error: BaseException) -> None:
        self._drain.on_error(error)

    def on_complete(self) -> None:
        self._drain.on_complete()

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        if self._subscribed:
            refuse(
                subscriber, ProtocolViolationError("UnicastProcessor allows only one subscriber")
            )
            return
        self._subscribed = True
        self._bind()
        self._drain.serve(subscriber)

    def _bind(self) -> None:
        self._drain.bind()
