"""``on_error_resume``: on an upstream error, continue with the publisher a function returns.

*when* selects the errors, as for ``on_error_return`` and ``retry``: an exception class (or a
tuple of them) or a predicate; by default every error is resumed.

Backpressure: demand still outstanding when the error arrived is requested from the fallback;
items already delivered are not requested again.
Errors: a non-matching error passes through; if the function (or the *when* predicate) raises
or the function does not return a publisher, that error is signalled (the original becomes
its ``__context__``); an error of the fallback itself passes through.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar, final

import attrs

from .._core import ArbiterSubscriber, Publisher, Subscriber, adopt, require_not_none, short_repr
from ._on_error_return import ErrorSelector, handles

__all__ = ("OnErrorResumePublisher",)

T = TypeVar("T")


@final
@attrs.frozen(kw_only=True)
class OnErrorResumePublisher(Publisher[T], Generic[T]):
    """What `Flux.on_error_resume` returns."""

    source: Publisher[T]
    fn: Callable[[BaseException], Publisher[T]]
    when: ErrorSelector | None = None

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(_OnErrorResumeSubscriber(subscriber, fn=self.fn, when=self.when))


@final
@attrs.define(eq=False)
class _OnErrorResumeSubscriber(ArbiterSubscriber[T]):
    _fn: Callable[[BaseException], Publisher[T]] | None = attrs.field(kw_only=True, alias="fn")
    _when: ErrorSelector | None = attrs.field(kw_only=True, alias="when")

    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        fn, self._fn = self._fn, None  # the fallback's own error is final
        if fn is None or self.done:
            self._finish_error(error)
            return
        if not handles(self, self._when, error):
            return
        try:
            fallback: object = fn(error)
            if not isinstance(fallback, Publisher):
                raise TypeError(
                    f"on_error_resume's function returned {short_repr(fallback)}, not a Publisher"
                )
        except Exception as exc:
            exc.__context__ = error
            self._finish_error(exc)
            return
        self._switch_to(adopt(fallback))
