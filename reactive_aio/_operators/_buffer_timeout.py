"""``buffer_timeout``: lists of up to *max_size* items, emitted when full or *max_time* after
the first item of the batch arrived, whichever comes first.

Backpressure: ``request(n)`` asks upstream for ``n * max_size`` items. A batch cut short
by the timer uses one unit of demand for fewer items, so items may keep arriving after
downstream's demand is used up: batches that become due then are held, not dropped, and
emitted on the next ``request``. The hold is bounded by what was requested upstream.
Errors: on an upstream error or completion the partial batch is queued and the terminal
signal follows the held batches (an error never overtakes them).
Loop: one `Deadline`, armed when a batch starts and disarmed when it is cut.

Deliberate choice: the demand a timed-out batch did not use stays outstanding upstream, and a
later ``request(n)`` still asks for ``n * max_size`` (Reactor's fair-backpressure variant
credits the unused part against later requests). The items that arrive on it fill the next
batches, which are held until requested, so nothing is lost and memory stays bounded by what
was asked upstream; a source that produces on request may only run ahead of downstream by
that slack.
"""

from __future__ import annotations

from typing import Generic, TypeVar, final

import attrs

from .._core import (
    Deadline,
    Publisher,
    SizedTimedOperator,
    Subscriber,
    require_not_none,
    require_running_loop,
)

__all__ = ("BufferTimeoutPublisher",)

T = TypeVar("T")


@final
@attrs.frozen
class BufferTimeoutPublisher(Publisher[list[T]], Generic[T]):
    """What `Flux.buffer_timeout` returns."""

    source: Publisher[T]
    max_size: int
    max_time: float

    def __attrs_post_init__(self) -> None:
        if self.max_size <= 0:
            raise ValueError(f"buffer_timeout max_size must be > 0, got {self.max_size}")
        if not self.max_time > 0:
            raise ValueError(f"buffer_timeout max_time must be > 0 seconds, got {self.max_time}")

    def subscribe(self, subscriber: Subscriber[list[T]]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        loop = require_running_loop("buffer_timeout")
        operator = _BufferTimeoutSubscriber(
            subscriber, max_size=self.max_size, max_time=self.max_time, what="buffer_timeout"
        )
        operator.deadline = Deadline(loop, operator.cut)
        self.source.subscribe(operator)


@final
@attrs.define(eq=False)
class _BufferTimeoutSubscriber(SizedTimedOperator[T, list[T]]):
    _batch: list[T] = attrs.field(factory=list, init=False)

    def on_next(self, item: T) -> None:
        if item is None:
            require_not_none(item, "2.13", "on_next's item")
        batch = self._batch
        batch.append(item)
        if len(batch) == 1 and self._max_size > 1:
            assert self.deadline is not None
            self.deadline.arm_in(self._max_time)
        if len(batch) >= self._max_size:
            self.cut()

    def cut(self) -> None:
        """Emit the current batch (when full, when its time is up, or at the end)."""
        if self.deadline is not None:
            self.deadline.disarm()
        batch = self._batch
        if batch:
            self._batch = []
            self.push(batch)

    def _ending(self, error: BaseException | None) -> None:
        self.cut()
        self.finish(error)

    def _release(self) -> None:
        self._batch = []
        if self.deadline is not None:
            self.deadline.disarm()
        super()._release()
