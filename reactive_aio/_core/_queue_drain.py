"""`QueueDrain`: a subscription that emits queued items as demand allows.

Operators that produce items outside of an upstream ``on_next`` (results of async calls, a
tail released at completion) push them with `QueueDrain.offer` and end with `QueueDrain.close`
or `QueueDrain.fail`; the inherited drain delivers them within demand, trampolined, and
completes once the queue is closed and empty. Two optional callbacks connect it to the
producer: *on_emitted* (items left the queue, e.g. to replenish upstream) and *on_release*
(the subscription ended: cancel upstream, stop workers).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

import attrs

from ._drain import DrainSubscription

__all__ = ("QueueDrain",)

T = TypeVar("T")


@attrs.define(eq=False)
class QueueDrain(DrainSubscription[T], Generic[T]):
    """Emits the items of an unbounded FIFO within demand; the producer bounds what it offers."""

    _on_emitted: Callable[[int], None] | None = attrs.field(
        default=None, kw_only=True, alias="on_emitted"
    )
    _on_release: Callable[[], None] | None = attrs.field(
        default=None, kw_only=True, alias="on_release"
    )
    _queue: deque[T] = attrs.field(factory=deque, init=False)
    _closed: bool = attrs.field(default=False, init=False)
    _failure: BaseException | None = attrs.field(default=None, init=False)

    # -- producer side ------------------------------------------------------------------

    @property
    def queued(self) -> int:
        """Items waiting for demand."""
        return len(self._queue)

    def offer(self, item: T) -> None:
        """Queue *item* and deliver what demand allows."""
        if self._done:
            return
        self._queue.append(item)
        self._drain()

    def offer_all(self, items: Iterable[T]) -> None:
        """Queue every item of *items*, then drain once."""
        if self._done:
            return
        self._queue.extend(items)
        self._drain()

    def close(self) -> None:
        """No more items: complete once the queue has been emitted."""
        self._closed = True
        self._drain()

    def fail(self, error: BaseException) -> None:
        """Fail now; queued items are dropped (errors are not delayed behind items)."""
        self._closed = True
        self._failure = error
        self._queue.clear()
        self._drain()

    def resume(self, requested: int) -> None:
        """Take over *requested* demand recorded elsewhere, without ``on_subscribe``.

        For an operator that was itself the downstream's subscription until now and hands
        emission over to this queue (``take_last`` at upstream completion).
        """
        if requested > 0:
            self.request(requested)
        else:
            self._drain()

    # -- the drain ----------------------------------------------------------------------

    def _emit(self, limit: int) -> int:
        queue = self._queue
        emitted = 0
        if queue and limit:
            downstream = self._downstream
            assert downstream is not None
            on_next = downstream.on_next
            popleft = queue.popleft
            while emitted < limit and queue:
                emitted += 1
                on_next(popleft())
                if self._done:
                    return emitted
            if self._on_emitted is not None:
                self._on_emitted(emitted)
        if not queue and self._closed and not self._done:
            failure = self._failure
            if failure is None:
                self._complete()
            else:
                self._error(failure)
        return emitted

    def _release(self) -> None:
        self._queue.clear()
        on_release = self._on_release
        self._on_release = None
        self._on_emitted = None
        if on_release is not None:
            on_release()
