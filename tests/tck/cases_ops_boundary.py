"""TCK cases for boundaries, demand shaping, backpressure, sharing, push sources, processors."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from reactive_aio import (
    BehaviorProcessor,
    Flux,
    FluxSink,
    MulticastProcessor,
    Overflow,
    Processor,
    Publisher,
    ReplayProcessor,
    SubmissionPublisher,
    Subscriber,
    UnicastProcessor,
)


def _emit_on_demand(n: int) -> Callable[[FluxSink[int]], object]:
    """An emitter that pushes only what is requested, lazily, from a task."""

    def emitter(sink: FluxSink[int]) -> None:
        async def run() -> None:
            for i in range(n):
                await sink.send(i)
                if sink.cancelled:
                    return
            sink.complete()

        task = asyncio.get_running_loop().create_task(run())
        sink.on_cancel(task.cancel)

    return emitter


class _Submitting:
    """Per subscriber: a fresh `SubmissionPublisher` fed by a task submitting 0..n-1."""

    def __init__(self, n: int) -> None:
        self._n = n

    def subscribe(self, subscriber: Subscriber[int]) -> None:
        publisher = SubmissionPublisher[int](16)
        publisher.subscribe(subscriber)

        async def run() -> None:
            for i in range(self._n):
                if publisher.subscriber_count == 0:
                    return  # cancelled
                await publisher.submit(i)
            publisher.close()

        asyncio.get_running_loop().create_task(run())


class _Fed:
    """Per subscriber: a fresh processor, subscribed first, then fed by ``Flux.range(0, n)``."""

    def __init__(self, n: int, make: Callable[[], Processor[int, int]]) -> None:
        self._n = n
        self._make = make

    def subscribe(self, subscriber: Subscriber[int]) -> None:
        processor = self._make()
        processor.subscribe(subscriber)
        Flux.range(0, self._n).subscribe(processor)


CASES: dict[str, Callable[[int], Publisher[int]]] = {
    "publish_on": lambda n: Flux.range(0, n).publish_on(buffer_size=16),
    "batch": lambda n: Flux.range(0, n).batch(8).flat_map_iterable(lambda chunk: chunk),
    "limit_rate": lambda n: Flux.range(0, n).limit_rate(8),
    "on_backpressure_buffer": lambda n: Flux.range(0, n).on_backpressure_buffer(
        2**31, overflow="error"
    ),
    "create": lambda n: Flux.create(_emit_on_demand(n), overflow=Overflow.ERROR),
    "share": lambda n: Flux.range(0, n).share(buffer_size=16),
    "publish": lambda n: Flux.range(0, n).publish(buffer_size=16).auto_connect(),
    "replay": lambda n: Flux.range(0, n).replay(8).ref_count(),
    "SubmissionPublisher": _Submitting,
    # The processors as publishers (the identity-processor verification is in PROCESSORS).
    "UnicastProcessor": lambda n: _Fed(n, lambda: UnicastProcessor[int](16)),
    "BehaviorProcessor": lambda n: _Fed(n, lambda: BehaviorProcessor[int]()),
}
"""Cases the TCK's library verification runs; sizes up to 2**31 - 1 must stay lazy."""

FAILED: dict[str, Callable[[], Publisher[int]]] = {
    "publish_on": lambda: Flux.error(RuntimeError("failed publisher")).publish_on(),
    "batch": lambda: Flux.error(RuntimeError("failed publisher")).batch().map(len),
    "create": lambda: Flux.create(lambda sink: sink.error(RuntimeError("failed publisher"))),
}
"""Publishers that signal on_subscribe then on_error."""

PROCESSORS: dict[str, Callable[[int], Processor[int, int]]] = {
    "MulticastProcessor": lambda size: MulticastProcessor[int](size),
    # size=0: a late subscriber sees only new items, as the identity-processor tests expect.
    # BehaviorProcessor is left out: replaying the latest item to a newcomer is its contract.
    "ReplayProcessor": lambda size: ReplayProcessor[int](size=0),
}
"""Processors under test, given a buffer size."""

COORDINATED: set[str] = {"MulticastProcessor"}
"""Processors that emit to all subscribers in lockstep: request from all before expecting."""

SINGLE_SUBSCRIBER_PROCESSORS: dict[str, Callable[[int], Processor[int, int]]] = {
    "UnicastProcessor": lambda size: UnicastProcessor[int](size),
}
"""Processors that accept exactly one subscriber (later ones get on_error): verify them with
``max_supported_subscribers() == 1``."""
