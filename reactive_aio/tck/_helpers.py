"""The TCK's building blocks: latches, promises, receptacles, manual subscribers/publishers.

Every object here belongs to one `TestEnvironment` and its loop. Signals may arrive from any
thread; they are handed over to the test's loop before touching any state, so the waits
(coroutines) and the records never race. Failures found inside a signal are flopped into the
environment, never raised into the publisher (except where the rules demand a ``TypeError``).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar, final

import attrs

from .._core import (
    MAX_DEMAND,
    DrainSubscription,
    NullSignalError,
    Publisher,
    Subscriber,
    Subscription,
    require_not_none,
)
from ._env import TestEnvironment

__all__ = (
    "BlackboxProbe",
    "BlackholeSubscriber",
    "HelperPublisher",
    "Latch",
    "ManualPublisher",
    "ManualSubscriber",
    "Promise",
    "Receptacle",
    "ReportingSubscriber",
    "SubscriberBufferOverflowError",
    "SubscriberPuppet",
    "SubscriptionPuppet",
    "TckTestError",
    "WhiteboxSubscriberProbe",
    "subscribe_and_wait",
)

T = TypeVar("T")
V = TypeVar("V")

RECEPTACLE_CAPACITY = 32
"""Elements a manual subscriber buffers before it fails the publisher (2 x 16, as the JVM TCK)."""


class TckTestError(RuntimeError):
    """The error the TCK sends through ``on_error`` in its tests."""

    def __init__(self) -> None:
        super().__init__("Test Exception: Boom!")


class SubscriberBufferOverflowError(RuntimeError):
    """A manual subscriber received more elements than it can hold without being read."""


@final
class _EndOfStream:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<end of stream>"


END = _EndOfStream()


class _Changes:
    """Wakes coroutines waiting for a condition each time the state changes."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def changed(self) -> None:
        self._event.set()

    async def wait_until(self, condition: Callable[[], bool], timeout: float) -> bool:
        """True as soon as ``condition()`` holds, False when *timeout* runs out first."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not condition():
            remaining = deadline - loop.time()
            if remaining <= 0:
                return False
            self._event.clear()
            try:
                async with asyncio.timeout(remaining):
                    await self._event.wait()
            except TimeoutError:
                return condition()
        return True


@final
class Latch:
    """A one-shot gate that can be re-opened."""

    def __init__(self, env: TestEnvironment) -> None:
        self.env = env
        self._closed = False
        self._changes = _Changes()

    def close(self) -> None:
        """Close the gate (idempotent)."""
        self._closed = True
        self._changes.changed()

    def reopen(self) -> None:
        """Open it again."""
        self._closed = False

    @property
    def is_closed(self) -> bool:
        """True once closed."""
        return self._closed

    async def expect_close(self, message: str, timeout: float | None = None) -> None:
        """Fail (and flop) unless the gate closes within *timeout* (default T)."""
        wait = self.env.timeout if timeout is None else timeout
        if not await self._changes.wait_until(lambda: self._closed, wait):
            self.env.flop_and_fail(f"{message} (within {wait * 1000:.0f} ms)")


@final
class Promise(Generic[V]):
    """A value that is set exactly once; a second completion is flopped."""

    def __init__(self, env: TestEnvironment, what: str = "promise") -> None:
        self.env = env
        self.what = what
        self._value: V | None = None
        self._done = False
        self._changes = _Changes()

    def complete(self, value: V) -> None:
        """Set the value; a second call flops."""
        if self._done:
            self.env.flop(f"{self.what} completed twice: already {self._value!r}, then {value!r}")
            return
        self._value = value
        self._done = True
        self._changes.changed()

    @property
    def is_completed(self) -> bool:
        """True once a value was set."""
        return self._done

    def value(self) -> V:
        """The value; fails (and flops) when not completed."""
        if not self._done:
            self.env.flop_and_fail(f"{self.what} is not completed yet")
        return self._value  # type: ignore[return-value]

    async def expect_completion(self, message: str, timeout: float | None = None) -> V:
        """Wait up to *timeout* (default T) for the value."""
        wait = self.env.timeout if timeout is None else timeout
        if not await self._changes.wait_until(lambda: self._done, wait):
            self.env.flop_and_fail(f"{message} (within {wait * 1000:.0f} ms)")
        return self._value  # type: ignore[return-value]


@final
class Receptacle(Generic[T]):
    """A bounded buffer of received elements plus one end-of-stream marker."""

    def __init__(self, env: TestEnvironment, capacity: int = RECEPTACLE_CAPACITY) -> None:
        self.env = env
        self.capacity = capacity
        self._items: deque[T | _EndOfStream] = deque()
        self._completed = False
        self._changes = _Changes()

    def add(self, item: T) -> None:
        """Record an element; after completion it is flopped (rule 1.7)."""
        if self._completed:
            self.env.flop(f"received on_next({item!r}) after on_complete (rule 1.7)")
            return
        if len(self._items) >= self.capacity:
            error = SubscriberBufferOverflowError(
                f"received more than {self.capacity} unread elements; last {item!r}"
            )
            self.env.flop(error)
            raise error
        self._items.append(item)
        self._changes.changed()

    def complete(self) -> None:
        """Record end-of-stream; a second one is flopped (rule 1.7)."""
        if self._completed:
            self.env.flop("unexpected additional on_complete signal (rule 1.7)")
            return
        self._completed = True
        self._items.append(END)
        self._changes.changed()

    @property
    def is_completed(self) -> bool:
        """True once end-of-stream was recorded (it may still be unread)."""
        return self._completed

    async def next_or_end(self, message: str, timeout: float | None = None) -> T | _EndOfStream:
        """The next element or `END`; fails on timeout."""
        wait = self.env.timeout if timeout is None else timeout
        if not await self._changes.wait_until(lambda: bool(self._items), wait):
            self.env.flop_and_fail(f"{message}: nothing within {wait * 1000:.0f} ms")
        return self._items.popleft()

    async def next(self, message: str, timeout: float | None = None) -> T:
        """The next element; fails on timeout or end-of-stream."""
        item = await self.next_or_end(message, timeout)
        if isinstance(item, _EndOfStream):
            self.env.flop_and_fail(f"{message}: expected an element but got end-of-stream")
        return item

    async def next_n(self, count: int, message: str, timeout: float | None = None) -> list[T]:
        """The next *count* elements within one shared deadline."""
        loop = asyncio.get_running_loop()
        wait = self.env.timeout if timeout is None else timeout
        deadline = loop.time() + wait
        items: list[T] = []
        for _ in range(count):
            item = await self.next(
                f"{message} (got {len(items)} of {count})", max(deadline - loop.time(), 0.0)
            )
            items.append(item)
        return items

    async def expect_completion(self, message: str, timeout: float | None = None) -> None:
        """The next signal must be end-of-stream."""
        item = await self.next_or_end(message, timeout)
        if not isinstance(item, _EndOfStream):
            self.env.flop_and_fail(f"{message}: expected end-of-stream but got element {item!r}")

    async def drain(self, window: float) -> int:
        """Wait *window*, then remove the elements that arrived and return how many."""
        await asyncio.sleep(window)
        count = 0
        while self._items:
            item = self._items.popleft()
            if isinstance(item, _EndOfStream):
                self.env.flop("unexpected on_complete")
            else:
                count += 1
        return count

    async def expect_none(self, message: str, window: float | None = None) -> None:
        """Wait the whole window (default N); any element or end-of-stream is flopped."""
        await asyncio.sleep(self.env.no_signals_timeout if window is None else window)
        if self._items:
            item = self._items.popleft()
            if isinstance(item, _EndOfStream):
                self.env.flop(f"{message}: expected no signal but got end-of-stream")
            else:
                self.env.flop(f"{message}: expected no signal but got element {item!r}")


class ManualSubscriber(Subscriber[T], Generic[T]):
    """A subscriber the test drives: it records what arrives and requests only when told.

    ``on_error`` flops the error, so ``env.expect_error`` finds it and any unexpected error
    fails the test. Signals before ``on_subscribe`` and a second ``on_subscribe`` are flopped.
    """

    def __init__(self, env: TestEnvironment) -> None:
        self.env = env
        self.received: Receptacle[T] = Receptacle(env)
        self.subscription: Promise[Subscription] = Promise(env, "the subscription")

    # -- Subscriber ----------------------------------------------------------------------

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "2.13", "on_subscribe's subscription")
        if self.env.hand_over(self.on_subscribe, subscription):
            return
        if self.subscription.is_completed:
            self.env.flop("on_subscribe called on an already subscribed subscriber (rule 1.9)")
            return
        self.subscription.complete(subscription)

    def on_next(self, item: T) -> None:
        require_not_none(item, "2.13", "on_next's item")
        if self.env.hand_over(self.on_next, item):
            return
        if not self.subscription.is_completed:
            self.env.flop(f"on_next({item!r}) before on_subscribe (rule 1.9)")
            return
        self._element(item)

    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        if self.env.hand_over(self.on_error, error):
            return
        if not self.subscription.is_completed:
            self.env.flop(f"on_error({error!r}) before on_subscribe (rule 1.9)")
        self.env.flop(error)

    def on_complete(self) -> None:
        if self.env.hand_over(self.on_complete):
            return
        if not self.subscription.is_completed:
            self.env.flop("on_complete before on_subscribe (rule 1.9)")
        self.received.complete()

    def _element(self, item: T) -> None:
        self.received.add(item)

    # -- driving -------------------------------------------------------------------------

    def request(self, n: int) -> None:
        """``request(n)`` on the subscription (which must have arrived)."""
        self.subscription.value().request(n)

    def cancel(self) -> None:
        """Cancel the subscription, if it arrived."""
        if self.subscription.is_completed:
            self.subscription.value().cancel()
        else:
            self.env.flop("cannot cancel: no subscription arrived")

    async def next_element(
        self, message: str = "expected an element", timeout: float | None = None
    ) -> T:
        """Wait for the next element."""
        return await self.received.next(message, timeout)

    async def next_elements(
        self, count: int, message: str = "expected elements", timeout: float | None = None
    ) -> list[T]:
        """Wait for the next *count* elements (one shared deadline)."""
        return await self.received.next_n(count, message, timeout)

    async def request_next_element(
        self, message: str = "expected an element", timeout: float | None = None
    ) -> T:
        """Request one and wait for it."""
        self.request(1)
        return await self.next_element(message, timeout)

    async def next_element_or_end_of_stream(
        self, message: str = "expected an element or end-of-stream", timeout: float | None = None
    ) -> T | None:
        """The next element, or None at end-of-stream."""
        item = await self.received.next_or_end(message, timeout)
        return None if isinstance(item, _EndOfStream) else item

    async def request_end_of_stream(
        self, message: str = "expected end-of-stream", timeout: float | None = None
    ) -> None:
        """Request one more and expect completion instead of an element."""
        self.request(1)
        await self.expect_completion(message, timeout)

    async def expect_next(
        self, expected: T, message: str = "expected an element", timeout: float | None = None
    ) -> None:
        """The next element equals *expected*."""
        item = await self.next_element(message, timeout)
        if item != expected:
            self.env.flop_and_fail(f"{message}: expected {expected!r} but got {item!r}")

    async def expect_completion(
        self, message: str = "expected on_complete", timeout: float | None = None
    ) -> None:
        """The next signal is ``on_complete``."""
        await self.received.expect_completion(message, timeout)

    async def expect_none(
        self, message: str = "expected no signals", window: float | None = None
    ) -> None:
        """Nothing arrives within the window (default N); otherwise flop."""
        await self.received.expect_none(message, window)


class BlackholeSubscriber(ManualSubscriber[T]):
    """A manual subscriber that drops every element (for draining long streams)."""

    def _element(self, item: T) -> None:
        pass


async def subscribe_and_wait(
    env: TestEnvironment,
    publisher: Publisher[T],
    subscriber: ManualSubscriber[T],
    *,
    verify: bool = True,
) -> ManualSubscriber[T]:
    """Subscribe and wait (up to T) for ``on_subscribe``; fail on any async error so far.

    With ``verify=False`` errors are left for the caller (a failed publisher's error).
    """
    publisher.subscribe(subscriber)
    await subscriber.subscription.expect_completion(
        f"{type(publisher).__name__} did not call on_subscribe (rule 1.9)"
    )
    if verify:
        env.verify_no_async_errors_no_delay()
    return subscriber


# -- the manual publisher ------------------------------------------------------------------


class ManualPublisher(Publisher[T], Generic[T]):
    """A single-subscriber publisher the test drives by hand (the subscriber tests' stage)."""

    def __init__(self, env: TestEnvironment) -> None:
        self.env = env
        self.subscriber: Subscriber[T] | None = None
        self.requests: deque[int] = deque()
        self.cancelled = Latch(env)
        self.subscription: ManualSubscription | None = None
        self._changes = _Changes()

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        if self.subscriber is not None:
            self.env.flop("the manual publisher supports only one subscriber")
            return
        self.subscriber = subscriber
        self.subscription = ManualSubscription(self)
        subscriber.on_subscribe(self.subscription)

    def _subscriber(self) -> Subscriber[T]:
        if self.subscriber is None:
            self.env.flop_and_fail("nothing subscribed to the manual publisher")
        return self.subscriber

    def send_next(self, item: T) -> None:
        """Call ``on_next(item)`` on the test's stack."""
        self._subscriber().on_next(item)

    def send_completion(self) -> None:
        """Call ``on_complete()``."""
        self._subscriber().on_complete()

    def send_error(self, error: BaseException) -> None:
        """Call ``on_error(error)``."""
        self._subscriber().on_error(error)

    def _requested(self, n: int) -> None:
        self.requests.append(n)
        self._changes.changed()

    @property
    def is_cancelled(self) -> bool:
        """True once the subscriber cancelled."""
        return self.cancelled.is_closed

    async def expect_request(
        self, message: str = "expected a request", timeout: float | None = None
    ) -> int:
        """Wait for the next ``request(n)``; n must be positive."""
        wait = self.env.timeout if timeout is None else timeout
        if not await self._changes.wait_until(lambda: bool(self.requests), wait):
            self.env.flop_and_fail(f"{message}: no request within {wait * 1000:.0f} ms")
        n = self.requests.popleft()
        if n <= 0:
            self.env.flop_and_fail(f"{message}: request({n}) is not positive (rule 3.9)")
        return n

    async def expect_exact_request(
        self, expected: int, message: str = "expected a request"
    ) -> None:
        """The next request is exactly *expected*."""
        n = await self.expect_request(message)
        if n != expected:
            self.env.flop_and_fail(f"{message}: expected request({expected}) but got request({n})")

    async def expect_no_request(self, message: str = "expected no request") -> None:
        """No request arrives within T."""
        if await self._changes.wait_until(lambda: bool(self.requests), self.env.timeout):
            self.env.flop_and_fail(f"{message}: got request({self.requests[0]})")

    async def expect_cancelling(
        self,
        message: str = "expected the subscription to be cancelled",
        timeout: float | None = None,
    ) -> None:
        """``cancel()`` arrives within T."""
        await self.cancelled.expect_close(message, timeout)


@final
class ManualSubscription(Subscription):
    """The subscription a `ManualPublisher` hands out: it only records calls.

    Calls must be serial (rule 2.7): an overlapping call from another thread is flopped.
    """

    def __init__(self, publisher: ManualPublisher[Any]) -> None:
        self._publisher = publisher
        self._active = 0

    def request(self, n: int) -> None:
        self._serial("request", lambda: self._publisher._requested(n))

    def cancel(self) -> None:
        self._serial("cancel", self._publisher.cancelled.close)

    def _serial(self, what: str, action: Callable[[], None]) -> None:
        env = self._publisher.env
        self._active += 1
        try:
            if self._active > 1:
                env.flop(f"{what}() overlapped another call on the same subscription (rule 2.7)")
            if not env.hand_over(action):
                action()
        finally:
            self._active -= 1


# -- probes for subscriber verifications ---------------------------------------------------


class SubscriberPuppet(Protocol):
    """What a whitebox subscriber hands the probe so the TCK can make it request or cancel."""

    def trigger_request(self, n: int) -> None:
        """Make the subscriber (eventually) request *n* more in total."""
        ...

    def signal_cancel(self) -> None:
        """Make the subscriber cancel its subscription."""
        ...


class BlackboxProbe(Generic[T]):
    """Records what a subscriber under test received."""

    def __init__(self, env: TestEnvironment) -> None:
        self.env = env
        self.elements: Receptacle[T] = Receptacle(env)
        self.error: Promise[BaseException] = Promise(env, "the probe's error (rule 1.7)")

    def register_on_next(self, item: T) -> None:
        """Call from ``on_next``."""
        if not self.env.hand_over(self.register_on_next, item):
            self.elements.add(item)

    def register_on_complete(self) -> None:
        """Call from ``on_complete``."""
        if not self.env.hand_over(self.register_on_complete):
            self.elements.complete()

    def register_on_error(self, error: BaseException) -> None:
        """Call from ``on_error``."""
        if not self.env.hand_over(self.register_on_error, error):
            self.error.complete(error)

    async def expect_next(self, expected: T, timeout: float | None = None) -> None:
        """The subscriber received *expected* next."""
        item = await self.elements.next("subscriber did not receive the element", timeout)
        if item != expected:
            self.env.flop_and_fail(f"subscriber received {item!r}, expected {expected!r}")

    async def expect_completion(self, timeout: float | None = None) -> None:
        """The subscriber received ``on_complete``."""
        await self.elements.expect_completion("subscriber did not receive on_complete", timeout)

    async def expect_error(
        self, expected: BaseException | type[BaseException], timeout: float | None = None
    ) -> BaseException:
        """The subscriber received *expected* (identity) or an error of that class."""
        error = await self.error.expect_completion("subscriber did not receive on_error", timeout)
        if isinstance(expected, BaseException):
            if error is not expected:
                self.env.flop_and_fail(f"subscriber received {error!r}, expected {expected!r}")
        elif not isinstance(error, expected):
            self.env.flop_and_fail(f"subscriber received {error!r}, expected a {expected.__name__}")
        return error

    async def expect_none(self, window: float | None = None) -> None:
        """The subscriber received nothing within the window (default N)."""
        await self.elements.expect_none("subscriber received a signal", window)
        if self.error.is_completed:
            self.env.flop(f"subscriber received on_error({self.error.value()!r})")


@final
class WhiteboxSubscriberProbe(BlackboxProbe[T]):
    """The probe a whitebox subscriber reports to; it also receives the puppet."""

    def __init__(self, env: TestEnvironment) -> None:
        super().__init__(env)
        self.puppet: Promise[SubscriberPuppet] = Promise(env, "the puppet")

    def register_on_subscribe(self, puppet: SubscriberPuppet) -> None:
        """Call from ``on_subscribe``; a second registration is ignored."""
        if self.env.hand_over(self.register_on_subscribe, puppet):
            return
        if not self.puppet.is_completed:
            self.puppet.complete(puppet)


@final
class SubscriptionPuppet:
    """A puppet that requests and cancels on a subscription directly."""

    def __init__(self, subscription: Subscription) -> None:
        self._subscription = subscription

    def trigger_request(self, n: int) -> None:
        self._subscription.request(n)

    def signal_cancel(self) -> None:
        self._subscription.cancel()


@final
class ReportingSubscriber(Subscriber[T]):
    """A whitebox layer in front of a subscriber that cannot report to a probe itself (one
    of a library, say): each signal goes to *subscriber* first, then to *probe*; the puppet is
    a `SubscriptionPuppet` on the subscription *subscriber* was given.

    A signal *subscriber* refuses (rule 2.13's ``TypeError``) is not reported.
    """

    def __init__(self, probe: WhiteboxSubscriberProbe[T], subscriber: Subscriber[T]) -> None:
        self.probe = probe
        self.subscriber = subscriber

    def on_subscribe(self, subscription: Subscription) -> None:
        self.subscriber.on_subscribe(subscription)
        self.probe.register_on_subscribe(SubscriptionPuppet(subscription))

    def on_next(self, item: T) -> None:
        self.subscriber.on_next(item)
        self.probe.register_on_next(item)

    def on_error(self, error: BaseException) -> None:
        self.subscriber.on_error(error)
        self.probe.register_on_error(error)

    def on_complete(self) -> None:
        self.subscriber.on_complete()
        self.probe.register_on_complete()


# -- the helper publisher ------------------------------------------------------------------


@final
@attrs.frozen
class HelperPublisher(Publisher[T]):
    """An asynchronous, unicast source of ``create_element(0) … create_element(count - 1)``.

    ``count == MAX_DEMAND`` means infinite. ``on_subscribe`` and every emission run from loop
    callbacks, never on the caller's stack, in batches (the core drain's).
    """

    count: int
    create_element: Callable[[int], T]

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        subscription = _HelperSubscription(subscriber, count=self.count, create=self.create_element)
        asyncio.get_running_loop().call_soon(subscription.start)


@final
@attrs.define(eq=False)
class _HelperSubscription(DrainSubscription[T]):
    _count: int = attrs.field(kw_only=True)
    _create: Callable[[int], T] = attrs.field(kw_only=True)
    _index: int = attrs.field(default=0, init=False)
    _scheduled: bool = attrs.field(default=False, init=False)

    def _drain(self) -> None:
        # Always from a fresh loop callback: the helper never emits on its caller's stack.
        if not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._run)

    def _run(self) -> None:
        self._scheduled = False
        super()._drain()

    def _emit(self, limit: int) -> int:
        infinite = self._count == MAX_DEMAND
        emitted = 0
        downstream = self._downstream
        while emitted < limit and (infinite or self._index < self._count):
            assert downstream is not None
            try:
                item = self._create(self._index)
            except Exception as exc:
                self._error(exc)
                return emitted
            if item is None:
                self._error(NullSignalError("rule 2.13: create_element returned None"))
                return emitted
            self._index += 1
            emitted += 1
            downstream.on_next(item)
            if self._done:
                return emitted
        if not infinite and self._index >= self._count:
            self._complete()
        return emitted
