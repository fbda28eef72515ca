"""TCK cases for the subscribers the library hands to publishers it did not create.

Name -> `SubscriberCase`: how a consumer of the library comes to subscribe to a foreign
publisher. The verification plays that publisher: `Capture` records whom the library
subscribes, and that object (the loop boundary in front of the consumer, or the processor
itself) is the subscriber under test. Spark's sinks are verified in tests/spark.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, final

import attrs

from reactive_aio import (
    BehaviorProcessor,
    Flux,
    MulticastProcessor,
    Processor,
    Publisher,
    ReplayProcessor,
    Subscriber,
    UnicastProcessor,
    to_async_iterator,
)
from reactive_aio._sinks._collect import consume
from reactive_aio.adapters._pull import PullSubscriber, pull
from reactive_aio.testing import TestSubscriber


@final
class Capture(Publisher[int]):
    """A publisher of another library that only records who subscribes to it."""

    def __init__(self) -> None:
        self.subscriber: Subscriber[int] | None = None

    def subscribe(self, subscriber: Subscriber[int]) -> None:
        self.subscriber = subscriber


def _nothing(handle: object) -> None:
    pass


@final
@attrs.frozen
class SubscriberCase:
    """One consumer: how it subscribes, and how to make it request when it waits to be asked."""

    start: Callable[[Publisher[int]], object]
    """Subscribe the consumer to the publisher; return what keeps it running (its handle)."""
    trigger_request: Callable[[Any], None] = _nothing
    """Given the handle, make the consumer request (the blackbox ``trigger_request``)."""


def started_now(coroutine: Coroutine[Any, Any, object]) -> Coroutine[Any, Any, object]:
    """Run *coroutine* up to its first ``await`` now (a collector subscribes there), then resume
    it whenever the future it waits on is done, as a task would, so its outcome is retrieved.

    The TCK asks for the subscriber synchronously; a task would only start on the next loop
    iteration.
    """

    def step() -> None:
        try:
            waiting = coroutine.send(None)
        except BaseException:  # its result or the stream's error: only the subscriber mattered
            return
        waiting.add_done_callback(lambda _: step())

    step()
    return coroutine


def _ignore(value: object) -> None:
    pass


def _true(item: int) -> bool:
    return True


def _false(item: int) -> bool:
    return False


def _add(total: int, item: int) -> int:
    return total + item


def _reduce(publisher: Publisher[int]) -> object:
    total: Coroutine[Any, Any, int] = Flux.from_publisher(publisher).reduce(_add, 0)
    return started_now(total)


def _fed(processor: Processor[int, int]) -> Callable[[Publisher[int]], object]:
    """A processor as the foreign publisher's subscriber, drained by a requesting subscriber."""

    def start(publisher: Publisher[int]) -> object:
        processor.subscribe(TestSubscriber[int](initial_request=2**63 - 1))
        publisher.subscribe(processor)
        return processor

    return start


def _consume(publisher: Publisher[int]) -> object:
    return consume(publisher, _ignore, asyncio.get_running_loop())


def _top_up(handle: PullSubscriber[int]) -> None:
    handle.poll()


SUBSCRIBERS: dict[str, Callable[[], SubscriberCase]] = {
    "to_list": lambda: SubscriberCase(lambda p: started_now(Flux.from_publisher(p).to_list())),
    "first": lambda: SubscriberCase(lambda p: started_now(Flux.from_publisher(p).first(0))),
    "last": lambda: SubscriberCase(lambda p: started_now(Flux.from_publisher(p).last(0))),
    "reduce": lambda: SubscriberCase(_reduce),
    "count": lambda: SubscriberCase(lambda p: started_now(Flux.from_publisher(p).count())),
    "all": lambda: SubscriberCase(lambda p: started_now(Flux.from_publisher(p).all(_true))),
    "any": lambda: SubscriberCase(lambda p: started_now(Flux.from_publisher(p).any(_false))),
    "contains": lambda: SubscriberCase(lambda p: started_now(Flux.from_publisher(p).contains(-1))),
    "is_empty": lambda: SubscriberCase(lambda p: started_now(Flux.from_publisher(p).is_empty())),
    "to_dict": lambda: SubscriberCase(lambda p: started_now(Flux.from_publisher(p).to_dict(str))),
    "to_multidict": lambda: SubscriberCase(
        lambda p: started_now(Flux.from_publisher(p).to_multidict(str))
    ),
    "to_sorted_list": lambda: SubscriberCase(
        lambda p: started_now(Flux.from_publisher(p).to_sorted_list())
    ),
    "subscribe": lambda: SubscriberCase(
        lambda p: Flux.from_publisher(p).subscribe(on_next=_ignore, on_error=_ignore)
    ),
    "subscribe(prefetch)": lambda: SubscriberCase(
        lambda p: Flux.from_publisher(p).subscribe(on_next=_ignore, on_error=_ignore, prefetch=4)
    ),
    "__aiter__": lambda: SubscriberCase(lambda p: aiter(Flux.from_publisher(p))),
    "iterate": lambda: SubscriberCase(lambda p: Flux.from_publisher(p).iterate(prefetch=4)),
    "to_async_iterator": lambda: SubscriberCase(lambda p: to_async_iterator(p, prefetch=4)),
    "SubmissionPublisher.consume": lambda: SubscriberCase(_consume),
    # The web responses (starlette and aiohttp), websocket_send and anyio's send stream
    # consume through pull(); the subscriber requests when the writer asks for the next item.
    "adapters.pull": lambda: SubscriberCase(lambda p: pull(p, window=4), trigger_request=_top_up),
    "MulticastProcessor": lambda: SubscriberCase(_fed(MulticastProcessor[int](16))),
    "ReplayProcessor": lambda: SubscriberCase(_fed(ReplayProcessor[int](size=8))),
    "BehaviorProcessor": lambda: SubscriberCase(_fed(BehaviorProcessor[int]())),
    "UnicastProcessor": lambda: SubscriberCase(_fed(UnicastProcessor[int](16))),
}
"""Every consumer the library offers, as a factory of its case (state is per test)."""
