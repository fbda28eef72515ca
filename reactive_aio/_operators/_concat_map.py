"""``concat_map``: map every item to an inner stream and play the inner streams one after another.

The next outer item is requested (and mapped) only when the current inner stream completed.

Backpressure: the outer source is asked for one item at a time; the inner stream prefetches
*prefetch* items into a bounded queue, re-requested in batches; downstream demand is honoured
exactly.
Errors: an error of the outer source or of the inner stream, or a raising function, cancels
both, then ``on_error`` once; queued items are dropped. With ``delay_errors=True`` a failed
inner stream is skipped and the next outer item mapped; the error comes at the end (see
``flat_map``).
Loop: none of its own; inner async iterables and awaitables run on the running loop.

Deliberate choice: the outer source is asked for one item at a time, the next only once the
current inner stream completed (Reactor prefetches 32 outer items). Nothing is pulled that an
error or a cancel would waste, no queue of outer items is held, and ``concat_map`` is exactly
``flat_map`` with concurrency 1. To overlap fetching outer items with the inner work, put
``publish_on(buffer_size=n)`` before it.
"""

from __future__ import annotations

from typing import ClassVar, TypeVar, final

import attrs

from ._flat_map import FlatMapPublisher

__all__ = ("ConcatMapPublisher",)

T = TypeVar("T")
R = TypeVar("R")


@final
@attrs.frozen
class ConcatMapPublisher(FlatMapPublisher[T, R]):
    """What `Flux.concat_map` returns."""

    _NAME: ClassVar[str] = "concat_map"
    _ORDERED: ClassVar[bool] = True
