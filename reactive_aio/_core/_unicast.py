"""`UnicastBuffer`: a publisher for exactly one subscriber, fed by a producer, buffering until
requested.

Operators that hand out sub-streams (``window``, ``group_by``) produce items before anyone has
subscribed to the sub-stream and before it has demand. A `UnicastBuffer` keeps them (the
producer bounds how many) and, once subscribed, delivers them through a `BufferDrain` within
the subscriber's demand. A second subscriber gets ``on_subscribe`` then
``on_error(ProtocolViolationError)``. The producer learns about consumption through
*on_consumed* (items delivered, or dropped because the subscriber cancelled) and about the end
of the sub-stream through *on_done* (completed, failed or cancelled; called once).

Every item is counted exactly once by *on_consumed*, also the one whose ``on_next`` cancels,
so a producer that replenishes its upstream by that count never loses demand. The items
buffered before the subscriber arrived become the head of its drain's queue, so whatever the
producer does while they are being delivered (push more, end the sub-stream) lands behind
them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar, final

import attrs

from ._attach import refuse
from ._buffer_drain import BufferDrain
from ._checks import require_not_none
from ._exceptions import ProtocolViolationError
from ._scan import StageScan, stage_state
from ._spec import Publisher, Subscriber

__all__ = ("UnicastBuffer",)

T = TypeVar("T")


@final
@attrs.define(eq=False)
class UnicastBuffer(Publisher[T], Generic[T]):
    """A single-subscriber publisher whose items are pushed by a producer."""

    _on_consumed: Callable[[int], None] | None = attrs.field(
        default=None, kw_only=True, alias="on_consumed"
    )
    _on_done: Callable[[], None] | None = attrs.field(default=None, kw_only=True, alias="on_done")
    _items: deque[T] = attrs.field(factory=deque, init=False)
    """What arrived before the subscriber; handed to its drain as the head of the queue."""
    _ended: bool = attrs.field(default=False, init=False)
    _failure: BaseException | None = attrs.field(default=None, init=False)
    _subscription: _UnicastSubscription[T] | None = attrs.field(default=None, init=False)
    _subscribed: bool = attrs.field(default=False, init=False)

    @property
    def done(self) -> bool:
        """Ended by the producer, or cancelled by its subscriber."""
        subscription = self._subscription
        return self._ended or (subscription is not None and subscription.done)

    # -- Publisher ----------------------------------------------------------------------

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        """Accept the one subscriber and start delivering what was buffered."""
        require_not_none(subscriber, "1.9", "the subscriber")
        if self._subscribed:
            refuse(
                subscriber, ProtocolViolationError("this sub-stream accepts a single subscriber")
            )
            return
        self._subscribed = True
        subscription = _UnicastSubscription[T](subscriber, owner=self)
        self._subscription = subscription
        subscription.start()
        if self._ended:
            subscription.finish(self._failure)

    def scan_stage(self) -> StageScan:
        """Its buffer and its subscriber's demand; before a subscriber, what waits for one
        (no demand, tagged ``subscriber=none``)."""
        subscription = self._subscription
        if subscription is not None:
            return attrs.evolve(subscription.scan_stage(), operator="sub-stream")
        return StageScan(
            operator="sub-stream",
            state=stage_state(ended=self._ended, error=self._failure),
            demand=0,
            buffered=len(self._items),
            emitted=0,
            error=self._failure,
            tags=(("subscriber", "none"),),
        )

    # -- producer side ------------------------------------------------------------------

    def push(self, item: T) -> None:
        """Buffer or deliver *item*; once the subscriber cancelled it is dropped (and counted)."""
        if self._ended:
            return
        subscription = self._subscription
        if subscription is None:
            self._items.append(item)
        elif subscription.done:
            self._consumed(1)
        else:
            subscription.push(item)

    def end(self, error: BaseException | None = None) -> None:
        """No more items: complete (or fail with *error*) after the buffered ones."""
        if self._ended:
            return
        self._ended = True
        self._failure = error
        subscription = self._subscription
        if subscription is not None:
            subscription.finish(error)
        self._notify_done()

    def discard(self) -> None:
        """Nobody will ever subscribe: drop what is buffered (counted as consumed) and end."""
        if self._subscribed:
            return
        items, self._items = self._items, deque()
        self.end()
        self._consumed(len(items))

    # -- internals ----------------------------------------------------------------------

    def _consumed(self, count: int) -> None:
        if count and self._on_consumed is not None:
            self._on_consumed(count)

    def _notify_done(self) -> None:
        on_done, self._on_done = self._on_done, None
        if on_done is not None:
            on_done()

    def _cancelled(self, undelivered: int) -> None:
        # The producer hears "done" first, so it can stop its source before the consumed
        # count makes it ask for more.
        self._notify_done()
        self._consumed(undelivered)


@final
@attrs.define(eq=False)
class _UnicastSubscription(BufferDrain[T], Generic[T]):
    _owner: UnicastBuffer[T] = attrs.field(kw_only=True, alias="owner")

    def __attrs_post_init__(self) -> None:
        owner = self._owner
        self._queue, owner._items = owner._items, deque()

    def _consumed(self, count: int) -> None:
        # also after _release: the items of the batch whose on_next cancelled were delivered
        self._owner._consumed(count)

    def _release(self) -> None:
        undelivered = self.buffered
        super()._release()
        self._owner._cancelled(undelivered)
