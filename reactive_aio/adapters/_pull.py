"""`write_all`: a publisher written by one async writer, as much as demand allows per write.

Backpressure: full; the `PullSubscriber` (`pull`) holds at most *window* items (requested or
buffered). Writing messages (``batch=1``), the window is topped up only when the writer comes
back after its previous write completed: with ``window=1`` the next item is requested only
once the previous one was written, and the transport's drain sets the pace. Writing a body
(``batch`` > 1), every item buffered when the writer is free goes out in one write, with the
batches a source that delivers on request refills the window with on the spot, up to about
`WRITE_BYTES`; the window is topped up for them as soon as the writer suspends, so the next
batch arrives while this one is written (such a source is not made to deliver before).
Nothing waits for a batch to fill: what is ready goes out.
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
from typing import Any, TypeVar, cast

from .._core import logger
from .._sinks._aiter import IDLE, PullSubscriber, pull

__all__ = ("DEFAULT_WINDOW", "IDLE", "PullSubscriber", "first", "pull", "write_all")

T = TypeVar("T")
C = TypeVar("C")

DEFAULT_WINDOW = 256
"""The response bodies' window: the most items requested or held ahead of the writer, as many
as ``async for`` prefetches by default. It bounds what a response holds; the size of a write
is `WRITE_BYTES`'s."""


_BATCHES_PER_TURN = 64
"""Batches a writer takes between two turns it gives the loop when its writes never suspend:
a synchronous source and a server that drops writes after a disconnect would otherwise
starve the loop, and with it the task that notices the disconnect."""

WRITE_BYTES = 65_536
"""How many bytes of ready items a body's write gathers at most: a write costs a send call on
the server and a read on the client whatever it carries (in ``benchmarks/bench_http.py`` the
64-line chunked floor costs more per line than the 256-line one by about 40 µs for each write
it makes more), and one window of short lines (NDJSON rows of a few tens of bytes) makes only a
few KiB. As much as asyncio's transports buffer
before they pause their writer; a batch of large items goes out alone, as it is."""


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
    least one, at most *batch*): one call to *encode* per ready batch, never a wait to fill
    one. With ``batch > 1`` (response bodies, whose chunks are bytes) one *write* carries
    the further batches that are ready at once, up to about `WRITE_BYTES`, and the window is
    topped up for a batch taken as soon as the writer suspends (`PullSubscriber.take` with
    *ahead*), so the source delivers the next batch while this one is written;
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
        turn_in = _BATCHES_PER_TURN
        while True:
            failure: Exception | None = None
            batches = 1
            try:
                items = subscriber.take(batch, ahead=ahead)  # no coroutine per item
                if items:
                    chunk = encode(items)
                    if ahead and isinstance(chunk, bytes) and len(chunk) < WRITE_BYTES:
                        gathered, batches, failure = _gathered(subscriber, batch, encode, chunk)
                        chunk = cast(C, gathered)  # (a body's chunks are bytes: C is bytes)
                elif await subscriber.wait(idle_after) or idle is None:
                    continue
                else:
                    chunk = idle
            except StopAsyncIteration:
                return None
            except Exception as exc:
                failure, chunk = exc, None
            if chunk is not None:
                await write(chunk)
            if failure is not None:
                subscriber.cancel()  # an encode failure must stop the source as well
                logger.error("%s failed: %r", what, failure, exc_info=failure)
                return failure
            turn_in -= batches
            if turn_in <= 0:
                turn_in = _BATCHES_PER_TURN
                await asyncio.sleep(0)
    finally:
        subscriber.cancel()


def _gathered(
    subscriber: PullSubscriber[T], batch: int, encode: Callable[[list[T]], Any], chunk: bytes
) -> tuple[bytes, int, Exception | None]:
    """*chunk* with the encoding of every further batch that is ready at once (a source that
    delivers on request refills the window on the spot), up to about `WRITE_BYTES`; how many
    batches that is; and the error *encode* raised for one of them, if any, after what was
    encoded before it (which still goes out)."""
    parts = [chunk]
    size = len(chunk)
    failure = None
    while size < WRITE_BYTES:
        items = subscriber.take(batch, ahead=True)
        if not items:
            break
        try:
            part = encode(items)
        except Exception as exc:
            failure = exc
            break
        parts.append(part)
        size += len(part)
    return b"".join(parts), len(parts), failure


def first(items: list[Any]) -> Any:
    """The one item of a batch of one: what a writer of messages sends as it is."""
    return items[0]
