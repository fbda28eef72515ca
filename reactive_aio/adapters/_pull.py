"""`write_all`: a publisher written by one async writer, as much as demand allows per write.

Backpressure: full; the `PullSubscriber` (`pull`) holds at most *window* items (requested or
buffered) and tops the window up only when the writer comes back after its previous write
completed. With ``window=1`` the next item is requested only once the previous one was written:
the transport's drain sets the pace. With a *join*, every item buffered when the writer comes
back goes out in one write. Behind a ``publish_on`` the `PullSubscriber` takes the boundary's
place, and with it the boundary's ``buffer_size`` as its window.
Errors: the stream's error is raised from `PullSubscriber.next` after the buffered items.
Loop: `pull` adopts a publisher of another library at the loop boundary, so its signals
reach the subscriber inside the loop it was created on, whatever thread sends them;
`PullSubscriber.cancel` may be called from anywhere on that loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from .._core import logger
from .._sinks._aiter import IDLE, PullSubscriber, pull

__all__ = ("DEFAULT_WINDOW", "IDLE", "PullSubscriber", "pull", "write_all")

T = TypeVar("T")
C = TypeVar("C")

DEFAULT_WINDOW = 64
"""The response bodies' window: up to this many items go out in one write."""


async def write_all(
    subscriber: PullSubscriber[T],
    encode: Callable[[T], C],
    write: Callable[[C], Awaitable[object]],
    *,
    join: Callable[[list[C]], C] | None = None,
    idle: C | None = None,
    idle_after: float | None = None,
    what: str = "stream",
) -> BaseException | None:
    """Write every item of *subscriber* with *write* and return how it ended.

    The next items are asked for only after ``write`` returned, so the writer's drain is the
    backpressure. With *join*, the items buffered by then (at most the window) are encoded and
    joined into one write; without it, one item goes out per write (websocket messages).
    When *idle_after* seconds pass without an item, *idle* is written instead (keep-alive).
    Whatever way this ends (an error of *write*, cancellation), the subscription is cancelled.

    Returns:
        None when the stream completed (or was cancelled); the stream's error, or the error
        *encode* raised, after logging it to the ``reactive_aio`` logger.
    """
    batch = 1 if join is None else subscriber.window
    try:
        writes = 0
        while True:
            try:
                items = subscriber.take(batch)  # no coroutine per item while the source keeps up
                if items:
                    chunk = encode(items[0]) if join is None else join([encode(i) for i in items])
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
