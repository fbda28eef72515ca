"""`QueueDrain`: one drain loop fed by bounded per-source queues, for prefetching operators.

Operators that subscribe to several sources (flat_map and friends, merge, zip, combine_latest,
race) or that hand items across a boundary (threads, ``publish_on``) all have the same shape:
every source fills a bounded queue, and ONE drain loop moves items from the queues to the
single downstream subscriber within its demand, checks for termination, and re-requests from
each source in batches as its queue empties. This module is that shape.

API
---
`QueueSubscriber` ``(owner, prefetch)``
    Subscribes to one source on behalf of an owner. It requests ``prefetch`` items on
    subscribe, keeps what arrives in ``queue`` (a deque that never holds more than
    ``prefetch``; a source that overflows it fails with `MissingBackpressureError`), and
    re-requests through a `Replenisher` as `QueueSubscriber.poll`/`QueueSubscriber.consumed`
    account for what the owner took. ``prefetch=MAX_DEMAND`` requests unbounded once. It
    tells its owner about every signal: ``owner.inner_next(self)``, ``owner.inner_complete(self)``,
    ``owner.inner_error(self, error)``. ``done`` turns true when the source terminated (its
    error, if any, is in ``error``); ``cancel()`` cancels the source, clears the queue and
    ignores whatever the source still sends. ``index`` is a free slot number for the owner.

`QueueDrain` ``(downstream)``
    A `DrainSubscription` (demand, trampoline, the *missed* flag of ``signal``, rule 3.9,
    rule 2.13, thread hand-over all come from there) whose pass, ``_emit(limit) -> int``,
    emits at most *limit* items from the queues with ``_emit_from``, checks termination (also
    with ``limit == 0``) and returns how many were emitted. Subclasses implement ``_emit`` and
    ``_release`` (cancel every source); an owner that knows an item may go first hands it
    over with the drain's ``_emit_now`` fast path.
    `QueueDrain._fail` signals an error exactly once: emission stops at once, ``_release``
    cancels the sources, then ``on_error`` goes downstream; any later error is reported
    (rule 2.13 style) instead of being swallowed. The ``inner_*`` callbacks default to
    ``signal()`` and, for errors, ``_fail(error)``. With ``delay_errors=True`` (keyword) an
    inner error is recorded instead and the drain carries on; where it would complete, the
    subclass calls `QueueDrain._end`, which completes or signals what was recorded (one error
    as is, several as one exception group).
    Over a fixed series of sources (``zip``, ``combine_latest``, ``race``),
    `QueueDrain.subscribe_all` subscribes one `QueueSubscriber` per source, kept by position in
    ``inners``.

`OuterDrain` ``(downstream)``
    The same drain, also subscribed to an outer source whose items it turns into work
    (``flat_map``'s inner streams, ``map_in_thread``'s calls): a configuration of
    `QueueDrain`, not another mechanism.

All state is touched on the owning loop's thread only: sources of this library signal there,
and ``request``/``cancel`` from other threads are handed over by `DrainSubscription`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar, final

import attrs

from ._checks import require_not_none
from ._demand import Replenisher
from ._drain import DrainSubscription
from ._exceptions import MissingBackpressureError, NullSignalError
from ._report import report_error
from ._scan import StageScan, stage_state
from ._spec import Publisher, Subscriber, Subscription

__all__ = ("OuterDrain", "QueueDrain", "QueueSubscriber")

T = TypeVar("T")
R = TypeVar("R")


@attrs.define(eq=False)
class QueueDrain(DrainSubscription[T]):
    """A drain over bounded queues; subclasses implement `_emit` and `_release`."""

    _delay_errors: bool = attrs.field(default=False, kw_only=True, alias="delay_errors")
    """Let the other sources finish before signalling errors (see `_end`)."""
    _errors: list[BaseException] = attrs.field(factory=list, init=False)
    inners: list[QueueSubscriber[Any]] = attrs.field(factory=list, init=False)
    """The sources `subscribe_all` subscribed, by position."""

    def subscribe_all(self, sources: Sequence[Publisher[Any]], prefetch: int) -> None:
        """Subscribe a fixed series of sources (``zip``, ``combine_latest``, ``race``): one
        `QueueSubscriber` each, indexed by position, in ``inners``. Starts the drain first; a
        source whose inner was cancelled meanwhile (a race already lost) or that comes after
        the drain ended is not subscribed at all."""
        inners = [QueueSubscriber[Any](self, prefetch, i) for i in range(len(sources))]
        self.inners = inners
        self.start()
        for source, inner in zip(sources, inners, strict=True):
            if self._done or inner.cancelled:
                break
            source.subscribe(inner)

    def scan_stage(self) -> StageScan:
        """The drain's figures, with its sources as inner chains."""
        return attrs.evolve(super().scan_stage(), inners=tuple(self.inners))

    # -- events from the sources --------------------------------------------------------

    def inner_next(self, inner: QueueSubscriber[Any]) -> None:
        """*inner* queued an item."""
        self.signal()

    def inner_complete(self, inner: QueueSubscriber[Any]) -> None:
        """*inner*'s source completed."""
        self.signal()

    def inner_error(self, inner: QueueSubscriber[Any], error: BaseException) -> None:
        """*inner*'s source failed: the stream fails now, or at its end when delaying errors."""
        if self._delay_errors:
            self._errors.append(error)
            self.signal()  # *inner* is done: its queued items still go out
        else:
            self._fail(error)

    def _end(self) -> None:
        """Every source is finished: complete, or signal the errors that were delayed.

        One delayed error is signalled as is; several as one `BaseExceptionGroup` (an
        `ExceptionGroup` when all are `Exception`s), in the order they happened.
        """
        errors = self._errors
        if not errors:
            self._complete()
        elif len(errors) == 1:
            self._error(errors[0])
        else:
            self._error(BaseExceptionGroup(f"{len(errors)} sources failed", errors))

    def _fail(self, error: BaseException) -> None:
        """End with *error* once: stop emitting, release (cancel sources), then ``on_error``."""
        if self._done:
            report_error(error, f"{type(self).__name__} failed after it finished", self._loop)
            return
        self._fault = error
        self._done = True  # a drain further up the stack stops emitting at once
        self._drain()


@final
@attrs.define(eq=False)
class QueueSubscriber(Subscriber[T], Generic[T]):
    """Prefetches from one source into a bounded queue for a `QueueDrain` owner."""

    _owner: QueueDrain[Any]
    prefetch: int
    index: int = 0
    """A slot number for the owner's bookkeeping (zip's position, ...)."""
    queue: deque[T] = attrs.field(factory=deque, init=False)
    done: bool = attrs.field(default=False, init=False)
    """The source terminated; items may still be queued."""
    error: BaseException | None = attrs.field(default=None, init=False)
    cancelled: bool = attrs.field(default=False, init=False)
    _replenisher: Replenisher = attrs.field(init=False)
    consumed: Callable[[int], None] = attrs.field(init=False)
    """Account for *count* items the owner took straight from ``queue`` (re-requests in
    batches)."""

    def __attrs_post_init__(self) -> None:
        self._replenisher = Replenisher(self.prefetch)
        self.consumed = self._replenisher.consumed

    # -- the source's signals -----------------------------------------------------------

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "2.13", "on_subscribe's subscription")
        if self._replenisher.upstream is not None or self.cancelled or self.done:
            subscription.cancel()  # rule 2.5, or the owner gave up on this source already
            return
        self._replenisher.start(subscription)

    def on_next(self, item: T) -> None:
        if self.done or self.cancelled:
            return
        if item is None:
            self._source_failed(NullSignalError("rule 2.13: a source signalled on_next(None)"))
            return
        queue = self.queue
        if len(queue) >= self.prefetch:
            self._source_failed(
                MissingBackpressureError(
                    f"rule 1.1: a source sent more than the {self.prefetch} items requested"
                )
            )
            return
        queue.append(item)
        self._owner.inner_next(self)

    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        if self.done or self.cancelled:
            report_error(error, "a source failed after it finished or was cancelled")
            return
        self.done = True
        self.error = error
        self._replenisher.upstream = None
        self._owner.inner_error(self, error)

    def on_complete(self) -> None:
        if self.done or self.cancelled:
            return
        self.done = True
        self._replenisher.upstream = None
        self._owner.inner_complete(self)

    def scan_stage(self) -> StageScan:
        """The queue and its bound, what its source still owes, and the source upstream."""
        return StageScan(
            operator="inner",
            state=stage_state(ended=self.done, cancelled=self.cancelled, error=self.error),
            buffered=len(self.queue),
            capacity=self.prefetch,
            upstream=self._replenisher.upstream,
        )

    # -- the owner's side ---------------------------------------------------------------

    def poll(self) -> T:
        """Take the head of the (non-empty) queue, re-requesting in batches."""
        item = self.queue.popleft()
        self.consumed(1)
        return item

    def cancel(self) -> None:
        """Cancel the source, drop the queue and ignore anything the source still sends."""
        self.cancelled = True
        self.queue.clear()
        self._replenisher.cancel()

    def _source_failed(self, error: BaseException) -> None:
        self._replenisher.cancel()
        self.done = True
        self.error = error
        self._owner.inner_error(self, error)


@attrs.define(eq=False)
class OuterDrain(QueueDrain[R], Subscriber[T], Generic[T, R]):
    """A `QueueDrain` that also subscribes to an outer source and turns its items into work
    (``flat_map``'s inner streams, ``map_in_thread``'s calls). Downstream gets its subscription
    when the outer one arrives; subclasses then ask for the first items (`_outer_started`)
    and see the outer end in ``_outer_done``."""

    _upstream: Subscription | None = attrs.field(default=None, init=False)
    _outer_done: bool = attrs.field(default=False, init=False)

    def scan_stage(self) -> StageScan:
        return attrs.evolve(super().scan_stage(), upstream=self._upstream)

    def _outer_started(self, subscription: Subscription) -> None:
        """Downstream has its subscription: ask the outer source for its first items."""
        raise NotImplementedError

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "2.13", "on_subscribe's subscription")
        if self._upstream is not None or self._outer_done or self._done:
            subscription.cancel()  # rule 2.5
            return
        self._upstream = subscription
        self.start()
        if not self._done:
            self._outer_started(subscription)

    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        self._upstream = None
        self._outer_done = True
        if self._delay_errors and not self._done:
            self._errors.append(error)
            self.signal()
        else:
            self._fail(error)

    def on_complete(self) -> None:
        self._upstream = None
        self._outer_done = True
        self.signal()
