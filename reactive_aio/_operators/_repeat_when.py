"""``repeat_when``: once the source completes, let a companion publisher decide whether to
subscribe to it again, and when.

The *companion* function is called once per subscription with a publisher of the
completed rounds (1 for the first completion, 2 for the second, …) and returns a publisher,
asked for one item per round: each item resubscribes the source, its completion completes
the stream (once the round its last item started has ended), its error fails it (Reactor's
``repeatWhen``; the round number stands in for Reactor's per-round item count, which would
cost a count per item).

Backpressure: each new subscription is asked for the demand still outstanding; items already
delivered are not requested again. The companion is asked for one item per round; the rounds
publisher buffers the rounds its subscriber has not asked for yet (one
at most: the source is not resubscribed before the companion answers).
Errors: an error of any round ends the stream (the companion is cancelled); so does the
companion's error; if *companion* raises, that error is signalled.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, final

import attrs

from .._core import Publisher, Subscriber, require_not_none
from ._retry_when import CompanionResubscriber

__all__ = ("RepeatWhenPublisher",)

T = TypeVar("T")


@final
@attrs.frozen
class RepeatWhenPublisher(Publisher[T], Generic[T]):
    """What `Flux.repeat_when` returns; *wrap* turns the rounds publisher into what the
    companion function is given."""

    source: Publisher[T]
    companion: Callable[[Any], Publisher[object]]
    wrap: Callable[[Publisher[int]], Any]

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        operator = _RepeatWhenSubscriber[T](subscriber)
        operator.begin(self.source, self.companion, self.wrap, "repeat_when")


@final
@attrs.define(eq=False)
class _RepeatWhenSubscriber(CompanionResubscriber[T, int]):
    _rounds: int = attrs.field(default=0, init=False)

    def on_complete(self) -> None:
        if not self.done:
            self._rounds += 1
            self._ended(self._rounds)
