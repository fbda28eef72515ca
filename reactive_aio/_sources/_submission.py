"""`SubmissionPublisher`: the JDK's hot publisher for Python: producers submit, subscribers drain.

Backpressure: buffer(max_buffer_capacity) per subscriber; an item is appended to every current
subscriber's buffer and delivered as each one's demand allows. ``await submit(x)`` waits until
the slowest subscriber's buffer has room; ``offer`` drops the item for subscribers whose
buffer is full (``on_drop`` may ask for one retry) and reports how many were dropped.
Errors: ``close()`` completes each subscriber after its buffered items;
``close_exceptionally(exc)`` fails every subscriber at once, dropping what was buffered; a
subscriber arriving after either gets ``on_subscribe`` then the terminal signal; submitting
after close raises `anyio.ClosedResourceError`; subscribing a subscriber that is already
subscribed ends both subscriptions with `ProtocolViolationError` (rules 1.10, 2.12).
Loop: belongs to the loop it was created (or first used) on; ``submit``/``offer`` from a
coroutine on another loop, ``offer_nowait`` and ``close`` from other threads are handed over.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Generic, TypeVar, final

import anyio
import attrs

from .._core import (
    DRAIN_BATCH,
    BufferDrain,
    LoopBound,
    Publisher,
    Subscriber,
    current_loop,
    hand_over,
    report_error,
    require_not_none,
)
from .._sinks._collect import consume

__all__ = ("SubmissionPublisher",)

T = TypeVar("T")

OnDrop = Callable[[Subscriber[Any], Any], object]
"""``on_drop(subscriber, item)``: a true result retries the offer to that subscriber once."""


@final
@attrs.define(eq=False)
class SubmissionPublisher(Publisher[T], LoopBound, Generic[T]):
    """A hot publisher with a bounded buffer per subscriber.

    Args:
        max_buffer_capacity: the most items one subscriber may have waiting.
    """

    max_buffer_capacity: int = 256
    _subscriptions: list[_SubmissionSubscription[T]] = attrs.field(factory=list, init=False)
    _closed: bool = attrs.field(default=False, init=False)
    _failure: BaseException | None = attrs.field(default=None, init=False)
    _space: list[asyncio.Future[None]] = attrs.field(factory=list, init=False)
    _since_yield: int = attrs.field(default=0, init=False)
    _loop: asyncio.AbstractEventLoop | None = attrs.field(factory=current_loop, init=False)

    def __attrs_post_init__(self) -> None:
        if self.max_buffer_capacity <= 0:
            raise ValueError(f"max_buffer_capacity must be > 0, got {self.max_buffer_capacity}")

    # -- state --------------------------------------------------------------------------

    @property
    def subscriber_count(self) -> int:
        """Current subscribers."""
        return len(self._subscriptions)

    @property
    def closed(self) -> bool:
        """True once `close` or `close_exceptionally` was called."""
        return self._closed

    @property
    def closed_exception(self) -> BaseException | None:
        """The error given to `close_exceptionally`, if any."""
        return self._failure

    def estimate_maximum_lag(self) -> int:
        """The most items any subscriber has waiting (submitted, not yet delivered)."""
        return max((s.buffered for s in self._subscriptions), default=0)

    def estimate_minimum_demand(self) -> int:
        """The least outstanding demand over the subscribers, net of their waiting items."""
        return min((s.outstanding for s in self._subscriptions), default=0)

    # -- Publisher ----------------------------------------------------------------------

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self._bind()
        subscription = _SubmissionSubscription[T](subscriber, publisher=self)
        subscription.subscriber = subscriber
        if self._closed:
            subscription.start()
            subscription.finish(self._failure)
            return
        subscription.start()
        if not subscription.done:
            self._subscriptions.append(subscription)

    # -- producing ----------------------------------------------------------------------

    async def submit(self, item: T) -> int:
        """Deliver *item* to every subscriber, first waiting for room in every buffer.

        It yields to the loop at least once every `DRAIN_BATCH` submissions.

        Returns:
            The estimated maximum lag after the submission.

        Raises:
            anyio.ClosedResourceError: the publisher is closed.
        """
        if item is None:
            require_not_none(item, "2.13", "the submitted item")
        foreign = self._foreign()
        if foreign is not None:
            return await asyncio.wrap_future(
                asyncio.run_coroutine_threadsafe(self.submit(item), foreign)
            )
        self._bind()
        self._since_yield += 1
        if (
            self._since_yield >= DRAIN_BATCH
        ):  # a producer looping over submit cannot starve the loop
            self._since_yield = 0
            await asyncio.sleep(0)
        while True:
            self._check_open()
            if all(s.buffered < self.max_buffer_capacity for s in self._subscriptions):
                break
            await self._wait_for_space()
        for subscription in tuple(self._subscriptions):
            subscription.push(item)
        return self.estimate_maximum_lag()

    def offer_nowait(self, item: T, *, on_drop: OnDrop | None = None) -> int:
        """Deliver *item* to every subscriber with room; never waits for a buffer.

        Returns:
            ``-drops`` when the item was dropped for some subscribers, otherwise the
            estimated maximum lag.
        """
        if item is None:
            require_not_none(item, "2.13", "the offered item")
        foreign = self._foreign()  # a foreign thread blocks until the loop has done it
        if foreign is not None:

            async def offer() -> int:
                return self.offer_nowait(item, on_drop=on_drop)

            return asyncio.run_coroutine_threadsafe(offer(), foreign).result()
        self._bind()
        self._check_open()
        drops = 0
        capacity = self.max_buffer_capacity
        for subscription in tuple(self._subscriptions):
            if subscription.buffered < capacity:
                subscription.push(item)
                continue
            if (
                on_drop is not None
                and self._retry(on_drop, subscription, item)
                and subscription.buffered < capacity
                and not subscription.done
            ):
                subscription.push(item)
                continue
            drops += 1
        return -drops if drops else self.estimate_maximum_lag()

    async def offer(
        self, item: T, *, timeout: float | None = None, on_drop: OnDrop | None = None
    ) -> int:
        """Like `offer_nowait`, but first wait up to *timeout* seconds for room everywhere."""
        if item is None:
            require_not_none(item, "2.13", "the offered item")
        foreign = self._foreign()
        if foreign is not None:
            return await asyncio.wrap_future(
                asyncio.run_coroutine_threadsafe(
                    self.offer(item, timeout=timeout, on_drop=on_drop), foreign
                )
            )
        self._bind()
        if timeout is not None and timeout > 0:
            try:
                async with asyncio.timeout(timeout):
                    while True:
                        self._check_open()
                        if all(s.buffered < self.max_buffer_capacity for s in self._subscriptions):
                            break
                        await self._wait_for_space()
            except TimeoutError:
                pass  # offer to whoever has room; the rest is dropped
        return self.offer_nowait(item, on_drop=on_drop)

    def close(self) -> None:
        """Complete every subscriber after its buffered items; later submissions fail."""
        if hand_over(self._loop, self.close):
            return
        self._terminate(None)

    def close_exceptionally(self, error: BaseException) -> None:
        """Fail every subscriber with *error* at once; later submissions fail."""
        require_not_none(error, "2.13", "the error")
        if hand_over(self._loop, self.close_exceptionally, error):
            return
        self._terminate(error)

    def consume(self, fn: Callable[[T], object]) -> asyncio.Future[None]:
        """Subscribe *fn* with unbounded demand; the future ends with the stream.

        If *fn* raises, the subscription is cancelled and the future fails with that error;
        cancelling the future cancels the subscription. The subscriber is the one behind
        ``Flux.reduce``, behind a loop boundary (rules 2.5, 2.13).
        """
        self._bind()
        return consume(self, fn, self._loop or asyncio.get_running_loop())

    # -- internals ----------------------------------------------------------------------

    def _bind(self) -> None:
        if self._loop is None:
            loop = current_loop()
            if loop is not None:
                self._loop = loop

    def _foreign(self) -> asyncio.AbstractEventLoop | None:
        """The owning loop when called from a coroutine of another thread's loop."""
        loop = self._loop
        if loop is not None and current_loop() is not loop and loop.is_running():
            return loop
        return None

    def _check_open(self) -> None:
        if self._closed:
            raise anyio.ClosedResourceError("the SubmissionPublisher is closed")

    async def _wait_for_space(self) -> None:
        waiter = asyncio.get_running_loop().create_future()
        self._space.append(waiter)
        await waiter

    def _wake(self) -> None:
        waiters, self._space = self._space, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def _retry(self, on_drop: OnDrop, subscription: _SubmissionSubscription[T], item: T) -> bool:
        subscriber = subscription.subscriber
        if subscriber is None:
            return False
        try:
            return bool(on_drop(subscriber, item))
        except Exception as exc:
            report_error(exc, "SubmissionPublisher on_drop callback raised", self._loop)
            return False

    def _terminate(self, error: BaseException | None) -> None:
        if self._closed:
            return
        self._closed = True
        self._failure = error
        for subscription in tuple(self._subscriptions):
            subscription.close(error)
        self._wake()

    def _leave(self, subscription: _SubmissionSubscription[T]) -> None:
        try:
            self._subscriptions.remove(subscription)
        except ValueError:
            pass
        self._wake()  # a gone subscriber no longer holds producers back


@final
@attrs.define(eq=False)
class _SubmissionSubscription(BufferDrain[T]):
    _publisher: SubmissionPublisher[T] = attrs.field(kw_only=True, alias="publisher")
    subscriber: Subscriber[T] | None = attrs.field(default=None, init=False)

    @property
    def outstanding(self) -> int:
        return max(0, self._requested - len(self._queue))

    def close(self, error: BaseException | None) -> None:
        if error is not None:
            self._queue.clear()  # close_exceptionally does not wait for the buffer
        self.finish(error)

    def _consumed(self, count: int) -> None:
        self._publisher._wake()

    def _release(self) -> None:
        super()._release()
        self.subscriber = None
        self._publisher._leave(self)
