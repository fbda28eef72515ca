"""anyio memory object streams ⇄ publishers.

Backpressure: full both ways. `from_receive_stream` receives from the stream only as items
are requested, so a full buffer blocks the stream's senders. `to_send_stream` requests one
item at a time and sends it with ``await stream.send``, which waits while the stream's buffer
is full: at most *capacity* items wait in the stream plus the one being sent.
Errors: `to_send_stream` closes the send stream and re-raises the publisher's error, so it
surfaces in the task group that owns the pump; a receiver that closed its end cancels the
subscription. Cancelling the pump (its task group) cancels the subscription.
Loop: the pump is a task of the caller's task group (`open_receive_stream` owns one).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TypeVar

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from .._core import Publisher
from .._flux import Flux
from ._pull import first, pull, write_all

__all__ = ("from_receive_stream", "open_receive_stream", "to_send_stream")

T = TypeVar("T")


def from_receive_stream(stream: MemoryObjectReceiveStream[T]) -> Flux[T]:
    """The items received from *stream*, received only as requested; completes when every
    send stream is closed. Cancelling closes *stream*. Subscribe once."""
    return Flux.from_async_iterable(stream)


async def to_send_stream(
    publisher: Publisher[T], stream: MemoryObjectSendStream[T], *, close: bool = True
) -> None:
    """Send every item of *publisher* into *stream*, waiting while it is full.

    Run it in a task group: ``tg.start_soon(to_send_stream, flux, send)``.

    Args:
        publisher: the source, subscribed when this starts.
        stream: where the items go.
        close: close *stream* when the publisher ends (then receivers see the end).

    Raises:
        BaseException: the publisher's error, after *stream* was closed.
    """
    subscriber = pull(publisher, window=1)
    try:
        error = await write_all(subscriber, first, stream.send, what="to_send_stream")
    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
        return  # every receiver is gone; write_all cancelled the subscription
    finally:
        if close:
            await stream.aclose()
    if error is not None:
        raise error


@asynccontextmanager
async def open_receive_stream(
    publisher: Publisher[T], *, capacity: int = 0
) -> AsyncIterator[MemoryObjectReceiveStream[T]]:
    """A receive stream fed by *publisher* through a memory stream of *capacity* items.

    A task group owns the pump; leaving the block cancels it and with it the subscription.
    The publisher's error is raised from the block (by the task group).

    Example:
        ``async with open_receive_stream(flux, capacity=8) as items:
        async for item in items: ...``
    """
    send, receive = anyio.create_memory_object_stream[T](capacity)
    async with anyio.create_task_group() as group:
        group.start_soon(to_send_stream, publisher, send)
        try:
            async with receive:
                yield receive
        finally:
            group.cancel_scope.cancel()
