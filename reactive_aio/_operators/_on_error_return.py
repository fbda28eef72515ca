"""``on_error_return``: on a matching upstream error, emit a value and complete.

*when* selects the errors: an exception class (or tuple of them) or a predicate; by default
every error matches.

Backpressure: the value waits for demand when none is outstanding.
Errors: a non-matching error passes through; if the predicate raises, that error is signalled
(the original becomes its ``__context__``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, final

import attrs

from .._core import ArbiterSubscriber, Publisher, Subscriber, require_not_none
from .._sources._from_iterable import IterablePublisher

__all__ = ("ErrorSelector", "OnErrorReturnPublisher", "handles", "selects")

T = TypeVar("T")

ErrorSelector = (
    type[BaseException] | tuple[type[BaseException], ...] | Callable[[BaseException], object]
)
"""Which errors an error handler applies to: classes, or a predicate."""


def selects(when: ErrorSelector | None, error: BaseException) -> bool:
    """True when *when* selects *error* (``None`` selects everything); a predicate's error
    propagates."""
    if when is None:
        return True
    return isinstance(error, when) if isinstance(when, (tuple, type)) else bool(when(error))


def handles(
    arbiter: ArbiterSubscriber[Any], when: ErrorSelector | None, error: BaseException
) -> bool:
    """True when *when* selects *error* (``None`` selects everything): the caller resumes.
    Otherwise *arbiter* has ended with *error*, or with what *when* raised (*error* as its
    context)."""
    try:
        matches = selects(when, error)
    except Exception as exc:
        exc.__context__ = error
        arbiter._finish_error(exc)
        return False
    if not matches:
        arbiter._finish_error(error)
    return matches


@final
@attrs.frozen(kw_only=True)
class OnErrorReturnPublisher(Publisher[T], Generic[T]):
    """What `Flux.on_error_return` returns."""

    source: Publisher[T]
    value: T
    when: ErrorSelector | None = None

    def __attrs_post_init__(self) -> None:
        require_not_none(self.value, "2.13", "on_error_return's value")

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(
            _OnErrorReturnSubscriber(subscriber, value=self.value, when=self.when)
        )


@final
@attrs.define(eq=False)
class _OnErrorReturnSubscriber(ArbiterSubscriber[T]):
    _value: T = attrs.field(kw_only=True, alias="value")
    _when: ErrorSelector | None = attrs.field(kw_only=True, alias="when")
    _resumed: bool = attrs.field(default=False, init=False)

    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        if self._resumed or self.done:
            self._finish_error(error)
            return
        if not handles(self, self._when, error):
            return
        self._resumed = True
        self._switch_to(IterablePublisher((self._value,)))
