"""``log``: log every signal, in both directions, to the ``reactive_aio`` logger.

Each record reads ``"<name> | on_next(<item>)"``, ``"<name> | request(5)"`` and so on, at
the given level; nothing is formatted when the level is disabled. The name defaults to the
stream's ``name()`` upstream (see `labels_of`).

Backpressure: pass-through.
Errors: upstream errors pass through (and are logged).
"""

from __future__ import annotations

import logging
from typing import Generic, TypeVar, final

import attrs

from .._core import (
    OperatorSubscriber,
    Publisher,
    Subscriber,
    Subscription,
    logger,
    require_not_none,
)
from ._name import DEFAULT_NAME, labels_of

__all__ = ("LogPublisher", "log_publisher")

T = TypeVar("T")


def log_publisher(source: Publisher[T], name: str | None, level: int) -> LogPublisher[T]:
    """What `Flux.log` wraps: *name*, else the stream's name upstream, else the default."""
    if name is None:
        name = labels_of(source)[0] or DEFAULT_NAME
    return LogPublisher(source, name, level)


@final
@attrs.frozen
class LogPublisher(Publisher[T], Generic[T]):
    """What `Flux.log` returns."""

    source: Publisher[T]
    name: str
    level: int = logging.INFO

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(_LogSubscriber(subscriber, name=self.name, level=self.level))


@final
@attrs.define(eq=False)
class _LogSubscriber(OperatorSubscriber[T, T]):
    _name: str = attrs.field(kw_only=True, alias="name")
    _level: int = attrs.field(kw_only=True, alias="level")

    def on_subscribe(self, subscription: Subscription) -> None:
        logger.log(self._level, "%s | on_subscribe(%r)", self._name, subscription)
        super().on_subscribe(subscription)

    def on_next(self, item: T) -> None:
        logger.log(self._level, "%s | on_next(%r)", self._name, item)
        self._next(item)

    def on_error(self, error: BaseException) -> None:
        logger.log(self._level, "%s | on_error(%r)", self._name, error)
        super().on_error(error)

    def on_complete(self) -> None:
        logger.log(self._level, "%s | on_complete()", self._name)
        super().on_complete()

    def _request(self, n: int) -> None:
        logger.log(self._level, "%s | request(%r)", self._name, n)
        super()._request(n)

    def cancel(self) -> None:
        logger.log(self._level, "%s | cancel()", self._name)
        super().cancel()
