"""``flux.subscribe(on_next=…, on_error=…, on_complete=…)``: callbacks as a subscriber.

Backpressure: requests ``prefetch`` up front (unbounded by default) and replenishes in
batches as items are handled.
Errors: a callback that raises cancels the subscription; an ``on_next`` failure is passed to
``on_error`` when one was given, otherwise it is reported (rule 2.13), as are errors with no
``on_error`` callback.
Rules: items arrive only after demand was signalled (rule 2.1); ``dispose`` cancels a
subscription that is no longer needed (rule 2.6); all calls on the subscription come from the
consumer, one at a time (rules 2.7, 3.1).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, Protocol, TypeVar, final

import attrs

from .._core import (
    MAX_DEMAND,
    StageScan,
    StageState,
    Subscriber,
    Subscription,
    replenish_threshold,
    report_error,
    require_not_none,
)

__all__ = ("Disposable", "LambdaSubscriber")

T_contra = TypeVar("T_contra", contravariant=True)


class Disposable(Protocol):
    """A handle that stops a running subscription."""

    def dispose(self) -> None:
        """Cancel the subscription; idempotent."""
        ...

    @property
    def disposed(self) -> bool:
        """True once disposed or terminated."""
        ...


@final
@attrs.define(eq=False)
class LambdaSubscriber(Subscriber[T_contra], Generic[T_contra]):
    """A subscriber that calls plain functions; also its own `Disposable`."""

    _on_next: Callable[[T_contra], object] | None = None
    _on_error: Callable[[BaseException], object] | None = None
    _on_complete: Callable[[], object] | None = None
    _prefetch: int = MAX_DEMAND
    _upstream: Subscription | None = attrs.field(default=None, init=False)
    _done: bool = attrs.field(default=False, init=False)
    _state: StageState = attrs.field(default="active", init=False)
    """How it ended, for `scan_stage`."""
    _error: BaseException | None = attrs.field(default=None, init=False)
    _consumed: int = attrs.field(default=0, init=False)
    _batch: int = attrs.field(
        init=False, default=attrs.Factory(lambda self: replenish_threshold(self._prefetch), True)
    )
    """Items consumed before re-requesting them (0: unbounded demand, nothing to re-request)."""

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "2.13", "on_subscribe's subscription")
        if self._upstream is not None or self._done:
            subscription.cancel()
            return
        self._upstream = subscription
        subscription.request(self._prefetch)

    def on_next(self, item: T_contra) -> None:
        if item is None:  # an `is` per item; the check itself only for the failing one
            require_not_none(item, "2.13", "on_next's item")
        if self._done:
            return
        callback = self._on_next
        if callback is not None:
            try:
                callback(item)
            except Exception as exc:
                self.dispose()
                self._state = "failed"
                self._error = exc
                self._signal_error(exc)
                return
        if self._batch:
            self._consumed += 1
            if self._consumed >= self._batch and self._upstream is not None:
                self._upstream.request(self._consumed)
                self._consumed = 0

    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        if self._done:
            return
        self._done = True
        self._state = "failed"
        self._error = error
        self._upstream = None
        self._signal_error(error)

    def on_complete(self) -> None:
        if self._done:
            return
        self._done = True
        self._state = "completed"
        self._upstream = None
        callback = self._on_complete
        if callback is not None:
            try:
                callback()
            except Exception as exc:
                report_error(exc, "on_complete callback raised")

    def dispose(self) -> None:
        """Cancel the subscription."""
        if self._done:
            return
        self._done = True
        self._state = "cancelled"
        upstream, self._upstream = self._upstream, None
        if upstream is not None:
            upstream.cancel()

    @property
    def disposed(self) -> bool:
        """True once disposed or terminated."""
        return self._done

    def scan_stage(self) -> StageScan:
        """The consumer: how it ended, and the subscription it pulls from."""
        return StageScan(
            operator="subscribe", state=self._state, error=self._error, upstream=self._upstream
        )

    def _signal_error(self, error: BaseException) -> None:
        callback = self._on_error
        if callback is None:
            report_error(error, "stream failed and subscribe() was given no on_error callback")
            return
        try:
            callback(error)
        except Exception as exc:
            report_error(exc, "on_error callback raised")
