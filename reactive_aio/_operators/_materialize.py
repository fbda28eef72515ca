"""``materialize``: every signal as an item, a `Notification`; then completion.

The source's items become ``Notification("next", value)``; its completion or error becomes a
last ``Notification("complete")`` or ``Notification("error", error=...)``, after which the
stream completes. ``dematerialize`` turns them back into signals.

Backpressure: pass-through for the items; the last notification waits for demand like any
item (the source's terminal signal is held until then).
Errors: none of its own: an upstream error is delivered as an item.
"""

from __future__ import annotations

from typing import Any, Generic, Literal, TypeVar, final

import attrs

from .._core import (
    Publisher,
    Subscriber,
    TailSubscriber,
    produced,
    request_error,
    require_not_none,
)

__all__ = ("MaterializePublisher", "Notification")

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


@final
@attrs.frozen
class Notification(Generic[T_co]):
    """A signal as a value: ``kind`` is ``"next"`` (with ``value``), ``"error"`` (with
    ``error``) or ``"complete"``. What `Flux.materialize` emits and `Flux.dematerialize`
    takes."""

    kind: Literal["next", "error", "complete"]
    value: T_co | None = None
    error: BaseException | None = None

    def __attrs_post_init__(self) -> None:
        if (self.kind == "next") is (self.value is None) or (self.kind == "error") is (
            self.error is None
        ):
            raise ValueError(f"a {self.kind!r} notification with {self.value!r}, {self.error!r}")


@final
@attrs.frozen
class MaterializePublisher(Publisher[Notification[T]], Generic[T]):
    """What `Flux.materialize` returns."""

    source: Publisher[T]

    def subscribe(self, subscriber: Subscriber[Notification[T]]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(_MaterializeSubscriber(subscriber))


@final
@attrs.define(eq=False)
class _MaterializeSubscriber(TailSubscriber[T, Notification[T]]):
    """Items pass through at once; the terminal notification is the held tail."""

    def on_next(self, item: T) -> None:
        self._requested = produced(self._requested, 1)
        self._next(Notification("next", item))

    def _request(self, n: int) -> None:
        if self._tail is None and not self._done and (type(n) is not int or n <= 0):
            self._fail(request_error(n))  # an error signal, not a notification (rule 3.9)
            return
        super()._request(n)

    def _ask_upstream(self, n: int) -> None:
        upstream = self._upstream
        if upstream is not None:
            upstream.request(n)

    def on_complete(self) -> None:
        self._complete_with((_COMPLETE,))

    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        if self._done:
            super().on_error(error)  # reported, not dropped
            return
        self._complete_with((Notification("error", error=error),))


_COMPLETE: Notification[Any] = Notification("complete")
