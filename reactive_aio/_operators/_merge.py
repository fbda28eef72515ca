"""``Flux.merge`` and ``merge_with``: the items of several publishers, as they come.

Backpressure: at most *concurrency* sources are subscribed at once (all of them by default);
each prefetches *prefetch* items into a bounded queue, re-requested in batches; downstream
demand is honoured exactly. Sources take turns, so a fast one cannot starve the others.
Errors: the first error of any source cancels all the others, then ``on_error`` once. With
``delay_errors=True`` the other sources run to their end first (several errors arrive as one
``ExceptionGroup``).
"""

from __future__ import annotations

from typing import Generic, TypeVar, final

import attrs

from .._core import MAX_DEMAND, Publisher, Subscriber, require_not_none, require_publisher
from .._sources._from_iterable import IterablePublisher
from ._flat_map import DEFAULT_PREFETCH, FlatMapMain, check_sizes

__all__ = ("MergePublisher",)

T = TypeVar("T")


def _same(publisher: Publisher[T]) -> Publisher[T]:
    return publisher


@final
@attrs.frozen
class MergePublisher(Publisher[T], Generic[T]):
    """What `Flux.merge` returns."""

    sources: tuple[Publisher[T], ...]
    concurrency: int | None = None
    """Sources subscribed at once; ``None`` means all of them."""
    prefetch: int = DEFAULT_PREFETCH
    delay_errors: bool = False

    def __attrs_post_init__(self) -> None:
        for source in self.sources:
            require_publisher(source, "merge")
        check_sizes(MAX_DEMAND if self.concurrency is None else self.concurrency, self.prefetch)

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        concurrency = self.concurrency
        if concurrency is None:
            concurrency = max(len(self.sources), 1)
        IterablePublisher(self.sources).subscribe(
            FlatMapMain[Publisher[T], T](
                subscriber,
                fn=_same,
                concurrency=concurrency,
                prefetch=self.prefetch,
                delay_errors=self.delay_errors,
                ordered=False,
                name="merge",
            )
        )
