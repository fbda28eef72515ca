"""Messages that name the rule and the culprit: bad requests (rule 3.9), raising subscribers
(rule 2.13) and items too large to print."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import pytest

from reactive_aio import (
    Flux,
    FluxSink,
    MissingBackpressureError,
    Overflow,
    Subscriber,
    Subscription,
)
from reactive_aio.testing import TestSubscriber

CHAINS: dict[str, Callable[[Flux[int]], Flux[int]]] = {
    "range": lambda flux: flux,
    "map": lambda flux: flux.map(lambda x: x + 1),
    "filter": lambda flux: flux.filter(lambda x: x % 2 == 0),
    "take": lambda flux: flux.take(5),
    "skip": lambda flux: flux.skip(2),
    "buffer": lambda flux: flux.buffer(2).map(len),
    "retry": lambda flux: flux.retry(1),
    "timeout": lambda flux: flux.timeout(60.0),
    "window": lambda flux: flux.window(2).concat_map(lambda w: w),
}
"""Sources, 1:1 operators with and without request-side state, and the arbiter."""


class _Requesting(Subscriber[int]):
    """Requests *n* as soon as it is subscribed; records what it gets."""

    def __init__(self, n: object) -> None:
        self.n = n
        self.items: list[int] = []
        self.errors: list[BaseException] = []
        self.completed = False

    def on_subscribe(self, subscription: Subscription) -> None:
        subscription.request(self.n)  # type: ignore[arg-type]

    def on_next(self, item: int) -> None:
        self.items.append(item)

    def on_error(self, error: BaseException) -> None:
        self.errors.append(error)

    def on_complete(self) -> None:
        self.completed = True


@pytest.mark.parametrize("chain", sorted(CHAINS))
@pytest.mark.parametrize("n", [1.5, "3", True, None, 0, -2], ids=repr)
async def test_a_bad_request_is_signalled_with_on_error(chain: str, n: object) -> None:
    loop = asyncio.get_running_loop()
    reported: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    subscriber = _Requesting(n)
    try:
        CHAINS[chain](Flux.range(0, 10)).subscribe(subscriber)
        for _ in range(5):
            await asyncio.sleep(0)
    finally:
        loop.set_exception_handler(None)
    assert subscriber.items == [], "items after a bad request"
    assert len(subscriber.errors) == 1, f"no on_error for request({n!r})"
    error = subscriber.errors[0]
    assert isinstance(error, ValueError)  # reactive_aio.InvalidRequestError
    assert "rule 3.9" in str(error)
    assert not subscriber.completed
    assert reported == [], "a bad request is the subscriber's error to see, not a 2.13 report"


class Exploding(Subscriber[int]):
    """A user's subscriber with a bug in ``on_next``."""

    def on_subscribe(self, subscription: Subscription) -> None:
        subscription.request(3)

    def on_next(self, item: int) -> None:
        raise RuntimeError("bug in the user's subscriber")

    def on_error(self, error: BaseException) -> None:
        pass

    def on_complete(self) -> None:
        pass


@pytest.mark.parametrize("chain", ["range", "map", "take", "retry"])
async def test_a_rule_2_13_report_names_the_users_class(
    chain: str, caplog: pytest.LogCaptureFixture
) -> None:
    loop = asyncio.get_running_loop()
    reported: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    try:
        with caplog.at_level(logging.ERROR, logger="reactive_aio"):
            CHAINS[chain](Flux.range(0, 10)).subscribe(Exploding())
    finally:
        loop.set_exception_handler(None)
    assert len(reported) == 1
    assert "Exploding.on_next raised" in reported[0]["message"], reported[0]["message"]
    assert "rule 2.13" in reported[0]["message"]


async def test_an_overflow_error_shows_a_short_repr_of_a_large_item() -> None:
    big = b"\0" * 1_000_000

    def emit(sink: FluxSink[bytes]) -> None:
        for _ in range(3):
            sink.next(big)

    ts = TestSubscriber[bytes]()
    Flux.create(emit, overflow=Overflow.BUFFER(1, then="error")).subscribe(ts)
    ts.request(1)  # the held item, then the error
    await ts.wait_terminated()
    ts.assert_error(MissingBackpressureError, match="bytes")
    assert len(str(ts.errors[0])) < 300, "the message embeds the whole item"
