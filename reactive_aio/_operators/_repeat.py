"""``repeat``: once the source completes, subscribe to it again.

With *times*, at most *times* further subscriptions after the first, as Reactor's
``repeat(n)`` counts (``repeat(0)`` plays the source once, ``repeat(2)`` three times) and as
``retry(n)`` counts retries; without it, for ever (until cancelled or an error). A cold
source starts afresh each time.

Backpressure: each new subscription is asked for the demand still outstanding; items already
delivered are not requested again. Rounds that complete inside their own ``subscribe`` (a
synchronous source) follow each other at once, but the arbiter subscribes one in every
``SYNC_SWITCHES`` from the event loop, so a short source repeated for ever never holds the
loop (rule 3.4).
Errors: an error of any round ends the stream; no further round is subscribed.
"""

from __future__ import annotations

from typing import Generic, TypeVar, final

import attrs

from .._core import ArbiterSubscriber, Publisher, Subscriber, require_not_none

__all__ = ("RepeatPublisher",)

T = TypeVar("T")


@final
@attrs.frozen
class RepeatPublisher(Publisher[T], Generic[T]):
    """What `Flux.repeat` returns."""

    source: Publisher[T]
    times: int | None = None

    def __attrs_post_init__(self) -> None:
        if self.times is not None and self.times < 0:
            raise ValueError(f"repeat times must be >= 0, got {self.times}")

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(_RepeatSubscriber(subscriber, left=self.times, source=self.source))


@final
@attrs.define(eq=False)
class _RepeatSubscriber(ArbiterSubscriber[T]):
    _left: int | None = attrs.field(kw_only=True, alias="left")
    """Further rounds still allowed; None: no limit."""
    _source: Publisher[T] = attrs.field(kw_only=True, alias="source")

    def on_complete(self) -> None:
        left = self._left
        if left == 0:
            self._finish_complete()
            return
        if left is not None:
            self._left = left - 1
        self._switch_to(self._source)
