"""How a sink that lands items in batches tells the sources what has landed.

A batching sink (the Spark sink, the PostgreSQL COPY sink) numbers every batch it writes. Once a
batch is durable, the sink calls `CommitListener.committed` with the batch's number and the
source positions of the items it carried, in the source's own terms: record indices for a
data-set replay, stream sequences for a broker. A source that acknowledges or checkpoints only
what has landed (a broker's ack-after-landing, a replay's resume) implements the listener. One
protocol serves every pairing of sink and source, so no connector needs its own.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import Protocol, TypeVar, runtime_checkable

__all__ = ("CommitListener",)

P_contra = TypeVar("P_contra", contravariant=True)


@runtime_checkable
class CommitListener(Protocol[P_contra]):
    """Told by a sink, batch by batch, which source positions are durable.

    Positions are whatever the sink's ``positions`` function extracts from an item: values a
    commit record can store (ints, strings, or tuples and lists of them). Redelivery can be out
    of order, so a batch reports every position it carried, never only the highest.
    """

    __slots__ = ()

    def committed(self, batch_id: int, positions: Sequence[P_contra]) -> Awaitable[None] | None:
        """Batch *batch_id*, carrying the items at *positions*, is durable in the sink.

        The sink calls this on its event loop, once per batch and in batch order, after the
        commit and never before; a batch found already committed (a retry, a rerun) is
        reported again, so a source that crashed before hearing of it can still acknowledge
        it. An awaitable result is awaited before the next batch is reported; an error raised
        here fails the sink's stream, and the batch stays committed.
        """
        ...
