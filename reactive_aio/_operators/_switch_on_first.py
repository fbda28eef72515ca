"""``switch_on_first``: decide, from the source's first signal, which stream to continue with.

The source is subscribed and asked for one item. Its first signal (the first item, or its
completion or error if it has none) is given, as a `Notification`, to ``fn(first, source)``
together with a publisher of the source's items from the first one on (Reactor's
``switchOnFirst``); the publisher *fn* returns is what the subscriber gets. That source
publisher accepts one subscriber; if nobody subscribes to it, the source is cancelled once
the returned stream ends.

Backpressure: the returned stream's demand passes through (an arbiter, as ``then``). The
source publisher holds the first item and prefetches `PREFETCH` more once it is subscribed,
re-requested in batches as its subscriber takes them.
Errors: the returned stream's error passes through; if *fn* raises, the source is cancelled
and that error is signalled; a source error after the first item goes to the source
publisher's subscriber.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, final

import attrs

from .._core import (
    ArbiterSubscriber,
    Publisher,
    Replenisher,
    Subscriber,
    Subscription,
    UnicastBuffer,
    require_not_none,
    require_publisher,
)
from ._materialize import Notification

__all__ = ("PREFETCH", "SwitchOnFirstPublisher")

T = TypeVar("T")
R = TypeVar("R")

PREFETCH = 32
"""Items the source publisher asks for beyond the first, once its subscriber asked."""


@final
@attrs.frozen
class SwitchOnFirstPublisher(Publisher[R], Generic[T, R]):
    """What `Flux.switch_on_first` returns; *wrap* turns the source publisher into what *fn*
    is given."""

    source: Publisher[T]
    fn: Callable[[Notification[T], Any], Publisher[R]]
    wrap: Callable[[Publisher[T]], Any]

    def subscribe(self, subscriber: Subscriber[R]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        switcher = _Switcher[R](subscriber)
        first = _FirstSubscriber[T, R](switcher, fn=self.fn, wrap=self.wrap)
        switcher.first = first
        switcher.start()
        if not switcher.done:
            self.source.subscribe(first)


@final
@attrs.define(eq=False)
class _Switcher(ArbiterSubscriber[R], Generic[R]):
    """Serves the subscriber from the publisher *fn* returned."""

    first: _FirstSubscriber[Any, R] | None = attrs.field(default=None, init=False)

    def _on_end(self) -> None:
        first, self.first = self.first, None
        if first is not None:
            first.abandoned()


@final
@attrs.define(eq=False)
class _FirstSubscriber(Subscriber[T], Generic[T, R]):
    _switcher: _Switcher[R]
    _fn: Callable[[Notification[T], Any], Publisher[R]] = attrs.field(kw_only=True, alias="fn")
    _wrap: Callable[[Publisher[T]], Any] = attrs.field(kw_only=True, alias="wrap")
    _upstream: Subscription | None = attrs.field(default=None, init=False)
    _inner: UnicastBuffer[T] | None = attrs.field(default=None, init=False)
    _window: Replenisher | None = attrs.field(default=None, init=False)

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "2.13", "on_subscribe's subscription")
        if self._upstream is not None or self._switcher.done:
            subscription.cancel()  # rule 2.5, or the subscriber already left
            return
        self._upstream = subscription
        subscription.request(1)

    def on_next(self, item: T) -> None:
        inner = self._inner
        if inner is not None:
            inner.push(item)
            return
        inner = self._inner = UnicastBuffer[T](on_consumed=self._consumed, on_done=self._left)
        inner.push(item)
        self._switch(Notification("next", item), inner)

    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        self._end(Notification("error", error=error), error)

    def on_complete(self) -> None:
        self._end(Notification("complete"), None)

    def _end(self, signal: Notification[T], error: BaseException | None) -> None:
        self._upstream = None  # terminated: nothing may call it from here on (rule 2.3)
        self._window = None
        inner = self._inner
        if inner is None:
            inner = self._inner = UnicastBuffer[T]()
            inner.end(error)
            self._switch(signal, inner)
        else:
            inner.end(error)

    def _switch(self, first: Notification[T], inner: UnicastBuffer[T]) -> None:
        try:
            then = self._fn(first, self._wrap(inner))
            require_publisher(then, "switch_on_first")
        except Exception as exc:
            self._cancel_upstream()
            self._switcher._finish_error(exc)
            return
        self._switcher._switch_to(then)

    def _consumed(self, count: int) -> None:
        window = self._window
        if window is None:
            upstream = self._upstream
            if upstream is None:
                return
            window = self._window = Replenisher(PREFETCH)
            window.start(upstream)  # the first item was taken: the rest is prefetched
            count -= 1
        if count:
            window.consumed(count)

    def _left(self) -> None:
        """The source publisher ended: its subscriber cancelled, or the source ended."""
        self._cancel_upstream()

    def abandoned(self) -> None:
        """The subscriber's stream ended: a source publisher nobody subscribed goes."""
        inner = self._inner
        if inner is None:
            self._cancel_upstream()
        else:
            inner.discard()  # ends it unless subscribed, which cancels upstream

    def _cancel_upstream(self) -> None:
        upstream, self._upstream = self._upstream, None
        window, self._window = self._window, None
        if window is not None:
            window.cancel()
        elif upstream is not None:
            upstream.cancel()
