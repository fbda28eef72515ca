"""``retry_when``: on an upstream error, let a companion publisher decide whether to
resubscribe, and when.

The *companion* function is called once per subscription with a publisher of the source's
errors (each error is pushed to it when it happens) and returns a publisher, asked for one
item per error: each item resubscribes the source, its completion completes the stream (once
the round its last item started has ended, whatever its end), its error fails it (Reactor's
``retryWhen``: a companion that ignores the errors, such as ``Flux.range(1, 3)``, allows
three retries). A `Retry` is such a
function, built from a spec as Reactor's ``Retry`` is: `Retry.max` (at most *n* retries, at
once) and `Retry.backoff` (exponential, jittered pauses); ``retry_backoff`` is the shorthand
for ``retry_when(Retry.backoff(...))``.

Backpressure: each new subscription is asked for the demand still outstanding; items already
delivered are not requested again. The companion is asked for one item per error; the errors
publisher buffers the errors its subscriber has not asked for yet (one
per retry at most: the source is not resubscribed before the companion answers).
Errors: the companion's error ends the stream (a `Retry` signals the source's last error,
with a note saying how many retries were made); if *companion* raises, that error is
signalled. Cancelling cancels the source and the companion.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any, Generic, TypeVar, final

import attrs

from .._core import (
    ArbiterSubscriber,
    Companion,
    Publisher,
    Subscriber,
    UnicastBuffer,
    require_not_none,
    require_publisher,
    stop_companion,
)
from .._sources._error import ErrorPublisher
from .._sources._from_iterable import IterablePublisher
from .._sources._timer import TimerPublisher
from ._concat_map import ConcatMapPublisher
from ._index import IndexPublisher
from ._on_error_return import ErrorSelector, selects

__all__ = ("CompanionResubscriber", "Retry", "RetryWhenPublisher", "backoff_delay")

T = TypeVar("T")
S = TypeVar("S")


def backoff_delay(
    attempt: int,
    first_backoff: float,
    max_backoff: float,
    jitter: float,
    uniform: Callable[[float, float], float] = random.uniform,
) -> float:
    """The pause before retry number *attempt* (0-based): ``min(first_backoff * 2**attempt,
    max_backoff)``, spread uniformly by ``± jitter`` of itself and clamped to
    ``[first_backoff, max_backoff]``."""
    base = min(first_backoff * 2.0**attempt, max_backoff)
    spread = base * jitter
    pause = base + uniform(-spread, spread) if spread else base
    return min(max(pause, first_backoff), max_backoff)


@final
@attrs.frozen
class Retry:
    """A retry spec for `Flux.retry_when`: called with the errors publisher, it returns the
    companion that answers each error with a retry (after its pause) or with that error.

    Build it with `Retry.max` or `Retry.backoff`; *when* (exception classes or a predicate,
    as for ``retry``) selects the errors that may be retried, the others end the stream.
    """

    max_attempts: int
    first_backoff: float = 0.0
    max_backoff: float = 0.0
    jitter: float = 0.0
    when: ErrorSelector | None = None

    def __attrs_post_init__(self) -> None:
        if self.max_attempts < 0:
            raise ValueError(f"Retry max_attempts must be >= 0, got {self.max_attempts}")
        if not 0 <= self.first_backoff <= self.max_backoff:
            raise ValueError(
                "Retry needs 0 <= first_backoff <= max_backoff, got "
                f"{self.first_backoff} and {self.max_backoff}"
            )
        if not 0 <= self.jitter <= 1:
            raise ValueError(f"Retry jitter must be in [0, 1], got {self.jitter}")

    @staticmethod
    def max(max_attempts: int, *, when: ErrorSelector | None = None) -> Retry:
        """At most *max_attempts* retries, each at once."""
        return Retry(max_attempts, when=when)

    @staticmethod
    def backoff(
        max_attempts: int,
        min_backoff: float,
        *,
        max_backoff: float = math.inf,
        jitter: float = 0.5,
        when: ErrorSelector | None = None,
    ) -> Retry:
        """At most *max_attempts* retries, retry *n* (0-based) after ``min_backoff * 2**n``
        seconds (at most *max_backoff*), spread by ``± jitter`` of itself."""
        return Retry(max_attempts, min_backoff, max_backoff, jitter, when)

    def __call__(self, errors: Publisher[BaseException]) -> Publisher[object]:
        return ConcatMapPublisher(IndexPublisher(errors), self._answer, 1, 1, False)

    def _answer(self, attempt: tuple[int, BaseException]) -> Publisher[object]:
        number, error = attempt
        if not selects(self.when, error):
            return ErrorPublisher(error)
        if number >= self.max_attempts:
            if self.max_attempts:
                error.add_note(f"retry: gave up after {self.max_attempts} retries")
            return ErrorPublisher(error)
        if not self.max_backoff:
            return IterablePublisher((number,))
        pause = backoff_delay(number, self.first_backoff, self.max_backoff, self.jitter)
        return TimerPublisher(pause)


@final
@attrs.frozen
class RetryWhenPublisher(Publisher[T], Generic[T]):
    """What `Flux.retry_when` returns; *wrap* turns the errors publisher into what the
    companion function is given."""

    source: Publisher[T]
    companion: Callable[[Any], Publisher[object]]
    wrap: Callable[[Publisher[BaseException]], Any]

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        operator = _RetryWhenSubscriber[T](subscriber)
        operator.begin(self.source, self.companion, self.wrap, "retry_when")


@attrs.define(eq=False)
class CompanionResubscriber(ArbiterSubscriber[T], Generic[T, S]):
    """Pushes each end of the source (of type ``S``) to the companion's signals publisher and
    resubscribes the source on each companion item that answers one."""

    _source: Publisher[T] = attrs.field(init=False)
    _signals: UnicastBuffer[S] = attrs.field(factory=UnicastBuffer, init=False)
    _companion: Companion | None = attrs.field(default=None, init=False)
    _waiting: bool = attrs.field(default=False, init=False)
    """The source ended and a companion item will resubscribe it."""
    _retrying: bool = attrs.field(default=False, init=False)
    """A round a companion item started has not ended yet."""
    _companion_over: bool = attrs.field(default=False, init=False)
    """The companion completed while a round it started was still to run or running."""

    def begin(
        self,
        source: Publisher[T],
        companion: Callable[[Any], Publisher[object]],
        wrap: Callable[[Publisher[S]], Any],
        what: str,
    ) -> None:
        """Signal ``on_subscribe``, follow the companion, subscribe the source."""
        self._source = source
        self.start()
        if self.done:
            return
        try:
            trigger = companion(wrap(self._signals))
            require_publisher(trigger, what)
        except Exception as exc:
            self._finish_error(exc)
            return
        follower = self._companion = Companion(self._trigger, self._companion_ended, ask_all=False)
        follower.follow(trigger)
        if not self.done:
            self._switch_to(source)

    def _ended(self, signal: S) -> None:
        """The source ended with *signal*: ask the companion."""
        if self._companion_over:
            self._finish_complete()
            return
        self._retrying = False
        self._upstream = None  # requests until the answer are carried to the next round
        self._waiting = True
        self._signals.push(signal)
        companion = self._companion
        if companion is not None:
            companion.request(1)  # one trigger per end

    def _trigger(self, _: object) -> None:
        if self._waiting and not self.done:
            self._waiting = False
            self._retrying = True
            self._switch_to(self._source)

    def _companion_ended(self, error: BaseException | None) -> None:
        if error is None and self._retrying:
            self._companion_over = True  # the round it started runs to its end first
            return
        self._pending = None
        self._cancel_upstream()
        if error is None:
            self._finish_complete()
        else:
            self._finish_error(error)

    def _on_end(self) -> None:
        self._signals.end()
        stop_companion(self._companion)


@final
@attrs.define(eq=False)
class _RetryWhenSubscriber(CompanionResubscriber[T, BaseException]):
    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        if self.done:
            self._finish_error(error)  # reported: it has nobody to go to
            return
        self._ended(error)
