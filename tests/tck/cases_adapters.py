"""TCK cases for the adapters that make publishers: name -> publisher of exactly n items.

Not here: ``from_observable`` (an observable pushes without demand, so no lazy source of
2**31 - 1 items exists; its rules are covered in tests/adapters/test_interop.py) and the web
adapters, which consume publishers rather than make them (``websocket_publisher``,
``request_body_publisher`` and ``sse_client`` need a live connection).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import anyio

from reactive_aio import Flux, Publisher
from reactive_aio.adapters.aiter import from_async_iterable
from reactive_aio.adapters.anyio import from_receive_stream

_feeders: set[asyncio.Task[None]] = set()


def _receive_stream(n: int) -> Flux[int]:
    """A memory stream of 16 fed by a task that blocks while it is full: lazy for any n."""

    def subscribe() -> Flux[int]:
        send, receive = anyio.create_memory_object_stream[int](16)

        async def feed() -> None:
            async with send:
                try:
                    for i in range(n):
                        await send.send(i)
                except anyio.BrokenResourceError:
                    return  # the subscriber cancelled, which closed the receive stream

        task = asyncio.get_running_loop().create_task(feed())
        _feeders.add(task)
        task.add_done_callback(_feeders.discard)
        return from_receive_stream(receive)

    return Flux.defer(subscribe)


async def _count(n: int) -> AsyncIterator[int]:
    for i in range(n):
        yield i


def _aiostream_range(n: int) -> Publisher[int]:
    import aiostream

    from reactive_aio.adapters.aiostream import from_stream

    return from_stream(aiostream.stream.range(n))


CASES: dict[str, Callable[[int], Publisher[int]]] = {
    "adapters.aiter.from_async_iterable": lambda n: from_async_iterable(_count(n)),
    "adapters.anyio.from_receive_stream": _receive_stream,
    "adapters.aiostream.from_stream": _aiostream_range,
}
"""Cases the TCK's library verification runs; sizes up to 2**31 - 1 must stay lazy."""


def _failed_observable() -> Publisher[int]:
    import reactivex

    from reactive_aio.adapters.rx import from_observable

    return from_observable(reactivex.throw(RuntimeError("failed publisher")))


FAILED: dict[str, Callable[[], Publisher[int]]] = {
    "adapters.rx.from_observable": _failed_observable,
}
"""Publishers that signal on_subscribe then on_error."""
