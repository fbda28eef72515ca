"""``Flux.concat`` and ``concat_with``: the items of several publishers, one after another.

Each source is subscribed only once the one before it completed.

Backpressure: the current source prefetches *prefetch* items into a bounded queue,
re-requested in batches; downstream demand is honoured exactly.
Errors: an error of the current source ends the stream with ``on_error``; later sources are
never subscribed. With ``delay_errors=True`` the later sources still play and the error comes
at the end (several as one ``ExceptionGroup``).
"""

from __future__ import annotations

from typing import Generic, TypeVar, final

import attrs

from .._core import Publisher, Subscriber, require_not_none, require_publisher
from .._sources._from_iterable import IterablePublisher
from ._flat_map import DEFAULT_PREFETCH, FlatMapMain, check_sizes

__all__ = ("ConcatPublisher",)

T = TypeVar("T")


def _same(publisher: Publisher[T]) -> Publisher[T]:
    return publisher


@final
@attrs.frozen
class ConcatPublisher(Publisher[T], Generic[T]):
    """What `Flux.concat` returns."""

    sources: tuple[Publisher[T], ...]
    prefetch: int = DEFAULT_PREFETCH
    delay_errors: bool = False

    def __attrs_post_init__(self) -> None:
        for source in self.sources:
            require_publisher(source, "concat")
        check_sizes(1, self.prefetch)

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        IterablePublisher(self.sources).subscribe(
            FlatMapMain[Publisher[T], T](
                subscriber,
                fn=_same,
                concurrency=1,
                prefetch=self.prefetch,
                delay_errors=self.delay_errors,
                ordered=True,
                name="concat",
            )
        )
