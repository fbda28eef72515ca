"""``retry``: on an upstream error, subscribe to the source again.

A cold source starts afresh on every attempt, so items may repeat across attempts.

Backpressure: each new subscription is asked for the demand still outstanding; items already
delivered are not requested again.
Errors: the error ends the stream once *max_attempts* retries are used up or *when* does not
select it; if *when* raises, that error is signalled (the original becomes its ``__context__``).
"""

from __future__ import annotations

from typing import Generic, TypeVar, final

import attrs

from .._core import ArbiterSubscriber, Publisher, Subscriber, require_not_none
from ._on_error_return import ErrorSelector, handles

__all__ = ("RetryPublisher",)

T = TypeVar("T")


@final
@attrs.frozen(kw_only=True)
class RetryPublisher(Publisher[T], Generic[T]):
    """What `Flux.retry` returns."""

    source: Publisher[T]
    max_attempts: int | None = None
    when: ErrorSelector | None = None

    def __attrs_post_init__(self) -> None:
        if self.max_attempts is not None and self.max_attempts < 0:
            raise ValueError(f"retry max_attempts must be >= 0, got {self.max_attempts}")

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(_RetrySubscriber(subscriber, options=self))


@final
@attrs.define(eq=False)
class _RetrySubscriber(ArbiterSubscriber[T]):
    _options: RetryPublisher[T] = attrs.field(kw_only=True, alias="options")
    _retries: int = attrs.field(default=0, init=False)

    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        options = self._options
        limit = options.max_attempts
        if self.done or (limit is not None and self._retries >= limit):
            self._finish_error(error)
            return
        if not handles(self, options.when, error):
            return
        self._retries += 1
        self._switch_to(options.source)
