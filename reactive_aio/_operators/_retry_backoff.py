"""``retry_backoff``: on error, resubscribe after an exponentially growing, jittered pause.

The n-th retry (n = 0, 1, …) waits ``min(first_backoff * 2**n, max_backoff)`` seconds,
spread uniformly by ``± jitter`` of itself and clamped to ``[first_backoff, max_backoff]``.
At most *max_attempts* retries are made; each resubscribes the source afresh (a cold
source starts over, so items already emitted may come again).
Backpressure: demand not yet served is requested again from each new subscription;
``request(n <= 0)`` fails the stream here (it is not retried).
Errors: once the retries are exhausted the last error passes on, with a note saying so.
Loop: one timer handle per pause, cancelled on ``cancel``.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from typing import Generic, TypeVar, final

import attrs

from .._core import ArbiterSubscriber, Publisher, Subscriber, require_not_none, require_running_loop

__all__ = ("RetryBackoffPublisher", "backoff_delay")

T = TypeVar("T")


def backoff_delay(
    attempt: int,
    first_backoff: float,
    max_backoff: float,
    jitter: float,
    uniform: Callable[[float, float], float] = random.uniform,
) -> float:
    """The pause before retry number *attempt* (0-based); see the module docstring."""
    base = min(first_backoff * 2.0**attempt, max_backoff)
    spread = base * jitter
    pause = base + uniform(-spread, spread) if spread else base
    return min(max(pause, first_backoff), max_backoff)


@final
@attrs.frozen
class RetryBackoffPublisher(Publisher[T], Generic[T]):
    """What `Flux.retry_backoff` returns."""

    source: Publisher[T]
    max_attempts: int
    first_backoff: float
    max_backoff: float
    jitter: float = 0.5

    def __attrs_post_init__(self) -> None:
        if self.max_attempts < 0:
            raise ValueError(f"retry_backoff max_attempts must be >= 0, got {self.max_attempts}")
        if not 0 <= self.first_backoff <= self.max_backoff:
            raise ValueError(
                "retry_backoff needs 0 <= first_backoff <= max_backoff, got "
                f"{self.first_backoff} and {self.max_backoff}"
            )
        if not 0 <= self.jitter <= 1:
            raise ValueError(f"retry_backoff jitter must be in [0, 1], got {self.jitter}")

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        require_running_loop("retry_backoff")
        self.source.subscribe(_RetryBackoffSubscriber(subscriber, spec=self))


@final
@attrs.define(eq=False)
class _RetryBackoffSubscriber(ArbiterSubscriber[T]):
    _spec: RetryBackoffPublisher[T] = attrs.field(kw_only=True, alias="spec")
    _attempt: int = attrs.field(default=0, init=False)
    _handle: asyncio.TimerHandle | None = attrs.field(default=None, init=False)

    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        spec = self._spec
        loop = self._loop
        if self.done or loop is None or self._attempt >= spec.max_attempts:
            if spec.max_attempts and not self.done:
                error.add_note(f"retry_backoff: gave up after {spec.max_attempts} retries")
            self._finish_error(error)
            return
        pause = backoff_delay(self._attempt, spec.first_backoff, spec.max_backoff, spec.jitter)
        self._attempt += 1
        self._upstream = None  # requests during the pause are carried to the next attempt
        self._handle = loop.call_later(pause, self._resubscribe)

    def _on_end(self) -> None:
        handle, self._handle = self._handle, None
        if handle is not None:
            handle.cancel()

    def _resubscribe(self) -> None:
        self._handle = None
        self._switch_to(self._spec.source)
