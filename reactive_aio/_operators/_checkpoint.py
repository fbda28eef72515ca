"""``checkpoint``: a named place in a stream that the errors passing it report.

A traceback from a user function ends in the library's emit loop, not at the line that
assembled the operator; an error passing a checkpoint gets a note (PEP 678, printed with the
traceback) naming the checkpoint's description and line, and the operators the error came
through, from the one whose function raised it down to the checkpoint, each with the line
that called it (recorded once per operator call; `reactive_aio._core._assembly`).

Not Spark's checkpoint: that is a directory where Spark keeps a streaming query's progress
(``from_streaming_query(checkpoint=DIR)``, the ``checkpointLocation`` of a query over
``to_spark_stream``'s DataFrame); this one only marks a place in a stream's code.

Items go past it (`PassThroughSubscriber`: no call of its own per item), but a fused chain
ends at it, so that every error from upstream reaches its ``on_error``.

Backpressure: pass-through; ``request(n)`` goes upstream unchanged.
Errors: passed on unchanged, with the note added once (an error passing the checkpoint again,
as the same exception after a ``retry``, gets no second one).
"""

from __future__ import annotations

from typing import Generic, TypeVar, final

import attrs

from .._core import (
    Assembly,
    PassThroughSubscriber,
    Publisher,
    Subscriber,
    note_checkpoint,
    require_not_none,
)

__all__ = ("CheckpointPublisher",)

T = TypeVar("T")


@final
@attrs.frozen
class CheckpointPublisher(Publisher[T], Generic[T]):
    """What `Flux.checkpoint` returns."""

    source: Publisher[T]
    description: str
    assembly: Assembly | None

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(_CheckpointSubscriber(subscriber, checkpoint=self))


@final
@attrs.define(eq=False)
class _CheckpointSubscriber(PassThroughSubscriber[T]):
    _checkpoint: CheckpointPublisher[T] = attrs.field(kw_only=True, alias="checkpoint")

    def on_error(self, error: BaseException) -> None:
        if error is not None and not self._done:
            note_checkpoint(error, self._checkpoint.description, self._checkpoint.assembly)
        super().on_error(error)
