"""``take``: the first *n* items, then completion.

Backpressure: demand above what is left is capped; once downstream asks for everything that
is left, upstream is asked for exactly that. Upstream is cancelled after the n-th item.
Errors: upstream errors pass through.

Deliberate choice: ``take(0)`` completes at once without subscribing upstream at all (as
Reactor does), so a source that opens a connection or starts work on subscribe costs
nothing; before, it was subscribed and cancelled straight away.
"""

from __future__ import annotations

from typing import Generic, TypeVar, final

import attrs

from .._core import OperatorSubscriber, Publisher, Subscriber, require_not_none
from .._sources._empty import EmptyPublisher

__all__ = ("TakePublisher",)

T = TypeVar("T")


@final
@attrs.frozen
class TakePublisher(Publisher[T], Generic[T]):
    """What `Flux.take` returns."""

    source: Publisher[T]
    count: int

    def __attrs_post_init__(self) -> None:
        if self.count < 0:
            raise ValueError(f"take count must be >= 0, got {self.count}")

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        if self.count == 0:
            EmptyPublisher().subscribe(subscriber)
            return
        self.source.subscribe(_TakeSubscriber(subscriber, remaining=self.count))


@final
@attrs.define(eq=False)
class _TakeSubscriber(OperatorSubscriber[T, T]):
    _remaining: int = attrs.field(kw_only=True, alias="remaining")
    _unasked: int = attrs.field(init=False)
    """Demand not yet forwarded upstream: upstream is never asked for more than the count."""

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        self._unasked = self._remaining

    def on_next(self, item: T) -> None:
        remaining = self._remaining
        if remaining <= 0:
            return
        self._remaining = remaining - 1
        self._next(item)
        if remaining == 1:
            self._complete_early()

    def _request(self, n: int) -> None:
        if self._done:
            return
        upstream = self._upstream
        if upstream is None:
            return
        if type(n) is not int or n <= 0:
            upstream.request(n)  # upstream signals the rule 3.9 error
            return
        unasked = self._unasked
        if unasked > 0:
            ask = n if n < unasked else unasked
            self._unasked = unasked - ask
            upstream.request(ask)
