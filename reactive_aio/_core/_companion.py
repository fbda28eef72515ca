"""`Companion`: subscribes to a companion publisher on an operator's behalf and relays every
signal to it.

Operators steered by another publisher (``buffer(boundary)``, ``window(boundary)``,
``sample(sampler)``, ``debounce(selector)``, ``retry_when``) react to each of its items and to
its end. The companion's items are triggers, never stored, so by default it is asked for
everything at once; with ``ask_all=False`` the operator asks for each trigger it is ready for
(`Companion.request`, recorded until the subscription arrives). Its terminal signal is
relayed once; `Companion.cancel` stops it and silences whatever it still
sends (an error that arrives then is reported, rule 1.7).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, final

import attrs

from ._checks import require_not_none
from ._demand import MAX_DEMAND, add_demand
from ._report import report_late_error
from ._spec import Publisher, Subscriber, Subscription

__all__ = ("Companion", "stop_companion")


def _ignore(item: Any) -> None:
    pass


@final
@attrs.define(eq=False)
class Companion(Subscriber[Any]):
    """Relays *on_item* for each item and *on_end* (None or the error) once at the end."""

    _on_item: Callable[[Any], object]
    _on_end: Callable[[BaseException | None], object]
    _ask_all: bool = attrs.field(default=True, kw_only=True, alias="ask_all")
    _upstream: Subscription | None = attrs.field(default=None, init=False)
    _requested: int = attrs.field(default=0, init=False)
    """Asked before the subscription arrived."""
    _done: bool = attrs.field(default=False, init=False)

    def follow(self, publisher: Publisher[Any]) -> Companion:
        """Subscribe to *publisher*; return self."""
        publisher.subscribe(self)
        return self

    @property
    def done(self) -> bool:
        """Ended or cancelled."""
        return self._done

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "2.13", "on_subscribe's subscription")
        if self._upstream is not None or self._done:
            subscription.cancel()  # rule 2.5, or already cancelled
            return
        self._upstream = subscription
        requested = MAX_DEMAND if self._ask_all else self._requested
        if requested:
            subscription.request(requested)

    def request(self, n: int) -> None:
        """Ask for *n* more triggers (with ``ask_all=False``)."""
        upstream = self._upstream
        if upstream is not None:
            upstream.request(n)
        elif not self._done:
            self._requested = add_demand(self._requested, n)

    def on_next(self, item: Any) -> None:
        if not self._done:
            self._on_item(item)

    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        if self._done:
            report_late_error(error)
            return
        self._end(error)

    def on_complete(self) -> None:
        if not self._done:
            self._end(None)

    def cancel(self) -> None:
        """Stop the companion; no more relays."""
        if self._done:
            return
        self._done = True
        self._on_item = _ignore
        upstream, self._upstream = self._upstream, None
        if upstream is not None:
            upstream.cancel()

    def _end(self, error: BaseException | None) -> None:
        self._done = True
        self._upstream = None
        on_end = self._on_end
        self._on_item = _ignore
        on_end(error)


def stop_companion(companion: Companion | None) -> None:
    """Cancel *companion*, if there is one."""
    if companion is not None:
        companion.cancel()
