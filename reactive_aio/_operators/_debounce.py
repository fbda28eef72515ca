"""``debounce``: emit an item only once a quiet period without a newer one has passed.

The quiet period is *timeout* seconds, or, given a *selector*, lasts until the publisher
``selector(item)`` emits its first item or completes (RxJava's ``debounce(selector)``,
Reactor's ``sampleTimeout``); a newer item cancels the previous item's publisher.

Backpressure: upstream is requested without bound (the operator drops by design); items
that became due while downstream has no demand are held, up to `HOLD` of them, then the
stream fails with `MissingBackpressureError`. A selector's publishers are asked for all
their items (their first one is all that counts).
Errors: an upstream error drops the item still waiting for its quiet period and is
signalled after the due items already held; on completion the waiting item is emitted first.
If *selector* raises or its publisher fails, upstream is cancelled and the error goes the
same way.
Loop: with *timeout*, one `Deadline`, pushed later by each item; at most one timer handle per
quiet period.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar, final

import attrs

from .._core import (
    MAX_DEMAND,
    BufferDrain,
    Companion,
    Deadline,
    Publisher,
    Subscriber,
    Subscription,
    require_not_none,
    require_running_loop,
)

__all__ = ("HOLD", "DebouncePublisher", "DebounceSelectorPublisher", "LatestHolder")

T = TypeVar("T")

HOLD = 256
"""Due items held for a downstream without demand before failing."""


@final
@attrs.frozen
class DebouncePublisher(Publisher[T], Generic[T]):
    """What `Flux.debounce` returns given a timeout."""

    source: Publisher[T]
    timeout: float

    def __attrs_post_init__(self) -> None:
        if self.timeout < 0:
            raise ValueError(f"debounce timeout must be >= 0 seconds, got {self.timeout}")

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        loop = require_running_loop("debounce")
        operator = _DebounceSubscriber(
            subscriber, timeout=self.timeout, capacity=HOLD, what="debounce"
        )
        operator.deadline = Deadline(loop, operator.fire)
        self.source.subscribe(operator)


@final
@attrs.frozen
class DebounceSelectorPublisher(Publisher[T], Generic[T]):
    """What `Flux.debounce` returns given a selector."""

    source: Publisher[T]
    selector: Callable[[T], Publisher[object]]

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(
            _DebounceSelectorSubscriber(
                subscriber, selector=self.selector, capacity=HOLD, what="debounce"
            )
        )


@attrs.define(eq=False)
class LatestHolder(BufferDrain[T], Generic[T]):
    """Keeps the latest upstream item until a trigger emits it (`fire`); subclasses start
    their trigger (`_started`), re-arm it per item (`_arm`) and stop it (`_stop`)."""

    _latest: T | None = attrs.field(default=None, init=False)

    def _started(self) -> None:
        """Downstream is subscribed, upstream about to be asked for everything."""

    def _arm(self, item: T) -> None:
        """*item* is now the latest."""

    def _stop(self) -> None:
        """No more triggers."""

    def _subscribed(self, upstream: Subscription) -> None:
        self.start()
        if not self.done:
            self._started()
        if not self._upstream_done and not self.done:
            upstream.request(MAX_DEMAND)

    def on_next(self, item: T) -> None:
        if item is None:
            require_not_none(item, "2.13", "on_next's item")
        self._latest = item
        self._arm(item)

    def fire(self, _: object = None) -> None:
        """Emit the latest item, if one waits."""
        latest, self._latest = self._latest, None
        if latest is not None:
            self.push(latest)

    def _trigger_ended(self, error: BaseException | None) -> None:
        """The trigger's publisher failed: upstream goes too."""
        if error is not None:
            self._drop_upstream()
            self._ending(error)

    def _ending(self, error: BaseException | None) -> None:
        self._stop()
        latest, self._latest = self._latest, None
        if error is None and latest is not None:
            self.push(latest)
        self.finish(error)

    def _release(self) -> None:
        self._latest = None
        self._stop()
        super()._release()


@final
@attrs.define(eq=False)
class _DebounceSubscriber(LatestHolder[T]):
    _timeout: float = attrs.field(kw_only=True, alias="timeout")
    deadline: Deadline | None = attrs.field(default=None, init=False)

    def _arm(self, item: T) -> None:
        assert self.deadline is not None
        self.deadline.arm_in(self._timeout)

    def _stop(self) -> None:
        if self.deadline is not None:
            self.deadline.disarm()


@final
@attrs.define(eq=False)
class _DebounceSelectorSubscriber(LatestHolder[T]):
    _selector: Callable[[T], Publisher[object]] = attrs.field(kw_only=True, alias="selector")
    _quiet: Companion | None = attrs.field(default=None, init=False)
    """Following the latest item's publisher."""

    def _arm(self, item: T) -> None:
        self._stop()
        try:
            quiet = self._selector(item)
        except Exception as exc:
            self._trigger_ended(exc)
            return
        companion = self._quiet = Companion(self._quiet_over, self._quiet_ended)
        companion.follow(quiet)  # stored first: an item it sends at once stops it

    def _quiet_over(self, _: object) -> None:
        self._stop()
        self.fire()

    def _quiet_ended(self, error: BaseException | None) -> None:
        self._quiet = None
        if error is None:
            self.fire()
        else:
            self._trigger_ended(error)

    def _stop(self) -> None:
        quiet, self._quiet = self._quiet, None
        if quiet is not None:
            quiet.cancel()
