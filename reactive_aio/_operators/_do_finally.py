"""``do_finally``: run a callback exactly once when the stream ends, however it ends.

The callback gets ``"complete"``, ``"error"`` or ``"cancel"`` and runs after the terminal
signal was passed downstream (after upstream was cancelled, for ``"cancel"``).

Backpressure: pass-through.
Errors: the callback has nobody left to signal to, so its exception is reported (logger and
loop exception handler, as rule 2.13 asks).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, Literal, TypeVar, final

import attrs

from .._core import OperatorSubscriber, Publisher, Subscriber, report_error, require_not_none

__all__ = ("DoFinallyPublisher", "EndSignal")

T = TypeVar("T")

EndSignal = Literal["complete", "error", "cancel"]
"""How a stream ended, as passed to the ``do_finally`` callback."""


@final
@attrs.frozen
class DoFinallyPublisher(Publisher[T], Generic[T]):
    """What `Flux.do_finally` returns."""

    source: Publisher[T]
    fn: Callable[[EndSignal], object]

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(_DoFinallySubscriber(subscriber, fn=self.fn))


@final
@attrs.define(eq=False)
class _DoFinallySubscriber(OperatorSubscriber[T, T]):
    _fn: Callable[[EndSignal], object] | None = attrs.field(kw_only=True, alias="fn")

    def on_next(self, item: T) -> None:
        self._next(item)

    def on_error(self, error: BaseException) -> None:
        try:
            super().on_error(error)
        finally:
            self._run("error")

    def on_complete(self) -> None:
        try:
            super().on_complete()
        finally:
            self._run("complete")

    def cancel(self) -> None:
        if self._hand_over_cancel() or self._done:
            return
        super().cancel()
        self._run("cancel")

    def _run(self, signal: EndSignal) -> None:
        fn, self._fn = self._fn, None  # at most once, whichever signal comes first
        if fn is not None:
            try:
                fn(signal)
            except Exception as exc:
                report_error(exc, "do_finally's callback raised", self._loop)
