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
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar, final

import attrs

from .._core import Publisher, Subscriber, require_not_none
from ._flat_map import DEFAULT_PREFETCH, FlatMapMain, check_sizes

__all__ = ("ConcatMapPublisher",)

T = TypeVar("T")
R = TypeVar("R")


@final
@attrs.frozen
class ConcatMapPublisher(Publisher[R], Generic[T, R]):
    """What `Flux.concat_map` returns."""

    source: Publisher[T]
    fn: Callable[[T], object]
    prefetch: int = DEFAULT_PREFETCH
    delay_errors: bool = False

    def __attrs_post_init__(self) -> None:
        check_sizes(1, self.prefetch)

    def subscribe(self, subscriber: Subscriber[R]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(
            FlatMapMain[T, R](
                subscriber,
                fn=self.fn,
                concurrency=1,
                prefetch=self.prefetch,
                delay_errors=self.delay_errors,
                ordered=True,
                name="concat_map",
            )
        )
