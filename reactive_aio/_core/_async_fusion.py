"""Async fusion: a subscriber that is an async boundary itself takes the place of one.

An async boundary (``publish_on``) puts a buffer between its source and its subscriber and
hands the items on from a loop callback, so that upstream never runs on the subscriber's
stack. Some subscribers work that way already: the pull buffer behind ``async for`` only
appends what arrives and wakes a reader that runs in a task of its own. A second buffer in
front of such a subscriber costs a drain pass and one more ``on_next`` per item and buys
nothing, so the boundary lets the subscriber take its place, the way Reactor's async fusion
lets a consumer drain the queue of the ``publishOn`` before it:

* the boundary publisher calls `fuse_boundary` from its ``subscribe``; an
  `AsyncBoundarySubscriber` that accepts is subscribed to the boundary's source directly;
* it takes over the boundary's prefetch: *prefetch* items asked for up front, *replenish*
  more each time that many were taken, so it never holds more than *prefetch* items;
* it sends its requests through a `DeferredSubscription`, which makes them from a loop
  callback: upstream emits where the boundary's drain ran, never on the reader's stack, and
  the reader gives the loop a turn at least once per batch.
"""

from __future__ import annotations

import asyncio
from typing import Any, TypeVar, final

import attrs

from ._spec import Publisher, Subscriber, Subscription

__all__ = ("AsyncBoundarySubscriber", "DeferredSubscription", "fuse_boundary")

T = TypeVar("T")


class AsyncBoundarySubscriber(Subscriber[T]):
    """A subscriber whose signals only fill a buffer that a task of its own reads: it can
    stand in for an async boundary in front of it (see the module docstring)."""

    __slots__ = ()

    def take_boundary(self, prefetch: int, replenish: int) -> bool:
        """Stand in for the async boundary that is about to subscribe this subscriber.

        Called before ``on_subscribe``. From then on the subscriber asks upstream for
        *prefetch* items at first and for *replenish* more each time that many were taken
        (``replenish == 0``: never again), every request made from a loop callback (a
        `DeferredSubscription`).

        Returns:
            False when it cannot (no running loop, subscribed or cancelled already): the
            boundary then stays in front of it.
        """
        raise NotImplementedError


def fuse_boundary(
    subscriber: Subscriber[T], source: Publisher[T], prefetch: int, replenish: int
) -> bool:
    """What an async boundary's ``subscribe`` calls first: subscribe *subscriber* to *source*
    in the boundary's place when it is an `AsyncBoundarySubscriber` that takes the boundary's
    *prefetch* and *replenish*. False when the boundary must subscribe it as usual."""
    if isinstance(subscriber, AsyncBoundarySubscriber) and subscriber.take_boundary(
        prefetch, replenish
    ):
        source.subscribe(subscriber)
        return True
    return False


@final
@attrs.define(eq=False)
class DeferredSubscription(Subscription):
    """*upstream* with every ``request`` made from a callback of *loop*; ``cancel`` acts at
    once, and a request still waiting after it is dropped. Called from *loop* only.

    A request that raises (a publisher breaking rule 3.15) cancels upstream and fails
    *subscriber* with the error, which nobody would see otherwise.
    """

    _upstream: Subscription | None
    _loop: asyncio.AbstractEventLoop
    _subscriber: Subscriber[Any]

    def request(self, n: int) -> None:
        self._loop.call_soon(self._request, n)

    def cancel(self) -> None:
        upstream, self._upstream = self._upstream, None
        if upstream is not None:
            upstream.cancel()

    def _request(self, n: int) -> None:
        upstream = self._upstream
        if upstream is None:
            return
        try:
            upstream.request(n)
        except Exception as exc:
            self.cancel()
            self._subscriber.on_error(exc)
