"""`write_all`: a publisher written by one async writer, as much as demand allows per write.

Backpressure: full; the `PullSubscriber` (`pull`) holds at most *window* items (requested or
buffered). Writing messages (``batch=1``), the window is topped up only when the writer comes
back after its previous write completed: with ``window=1`` the next item is requested only
once the previous one was written, and the transport's drain sets the pace. Writing a body
(``batch`` > 1), every item buffered when the writer is free goes out in one write, and the
window is topped up for them as soon as the writer suspends, so the next batch arrives while
this one is written (a source that delivers on request is not made to deliver before).
Behind a ``publish_on`` the `PullSubscriber` takes the boundary's place, and with it the
boundary's ``buffer_size`` as its window.
Errors: the stream's error is raised from `PullSubscriber.next` after the buffered items.
Loop: `pull` adopts a publisher of another library at the loop boundary, so its signals
reach the subscriber inside the loop it was created on, whatever thread sends them;
`PullSubscriber.cancel` may be called from anywhere on that loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from .._core import logger
from .._sinks._aiter import IDLE, PullSubscriber, pull

__all__ = ("DEFAULT_WINDOW", "IDLE", "PullSubscriber", "first", "pull", "write_all")

T = TypeVar("T")
C = TypeVar("C")

DEFAULT_WINDOW = 256
"""The response bodies' window: up to this many items go out in one write. Wide enough that
a fast source's writes are large (a write costs a send call and the client a read, whatever
it carries); as many as ``async for`` prefetches by default."""


async def write_all(
    subscriber: PullSubscriber[T],
    encode: Callable[[list[T]], C],
    write: Callable[[C], Awaitable[object]],
    *,
    batch: int = 1,
    idle: C | None = None,
    idle_after: float | None = None,
    what: str = "stream",
) -> BaseException | None:
    """Write every item of *subscriber* with *write* and return how it ended.

    Each write carries what *encode* makes of the items at hand when the writer is free (at
    least one, at most *batch*): one call to *encode* and one *write* per ready batch, never
    a wait to fill one. With ``batch > 1`` (response bodies) the window is topped up for a
    batch taken as soon as the writer suspends (`PullSubscriber.take` with *ahead*), so the
    source delivers the next batch while this one is written;
    with ``batch=1`` (messages) the next item is requested only once *write* returned. Either
    way at most the window is requested ahead of the writer, and the writer's drain is the
    backpressure. When *idle_after* seconds pass without an item, *idle* is written instead
    (keep-alive). Whatever way this ends (an error of *write*, cancellation), the
    subscription is cancelled.

    Returns:
        None when the stream completed (or was cancelled); the stream's error, or the error
        *encode* raised, after logging it to the ``reactive_aio`` logger.
    """
    ahead = batch > 1
    try:
        writes = 0
        while True:
            try:
                items = subscriber.take(batch, ahead=ahead)  # no coroutine per item
                if items:
                    chunk = encode(items)
                elif await subscriber.wait(idle_after) or idle is None:
                    continue
                else:
                    chunk = idle
            except StopAsyncIteration:
                return None
            except Exception as exc:
                subscriber.cancel()  # an encode failure must stop the source as well
                logger.error("%s failed: %r", what, exc, exc_info=exc)
                return exc
            await write(chunk)
            writes += 1
            if not writes & 63:
                # A synchronous source and a writer that never suspends (a server that drops
                # writes after a disconnect) would otherwise starve the loop, and with it the
                # task that notices the disconnect.
                await asyncio.sleep(0)
    finally:
        subscriber.cancel()


def first(items: list[Any]) -> Any:
    """The one item of a batch of one: what a writer of messages sends as it is."""
    return items[0]
