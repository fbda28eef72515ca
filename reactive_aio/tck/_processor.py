"""`IdentityProcessorVerification`: a processor as publisher (38 tests), as whitebox
subscriber (27 tests), plus the 3 tests of its own.

The publisher side feeds the processor from the asynchronous helper publisher; the subscriber
side puts a TCK subscriber behind the processor whose puppet requests and cancels downstream,
so what the stage sends upstream must come out downstream. Passing both halves is what rule
4.1 asks of a processor; the error tests check rule 4.2.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Generic, TypeVar

import pytest

from .._core import MAX_DEMAND, Processor, Publisher, Subscriber, Subscription
from ._base import required
from ._env import TestEnvironment
from ._helpers import (
    ManualPublisher,
    ManualSubscriber,
    Promise,
    SubscriptionPuppet,
    TckTestError,
    WhiteboxSubscriberProbe,
    subscribe_and_wait,
)
from ._publisher import PublisherVerification
from ._subscriber_whitebox import SubscriberWhiteboxVerification

__all__ = ("IdentityProcessorVerification",)

T = TypeVar("T")

TEST_BUFFER_SIZE = 16
"""The default buffer size handed to `create_identity_processor`."""


class IdentityProcessorVerification(
    PublisherVerification[T], SubscriberWhiteboxVerification[T], Generic[T]
):
    """Verify an identity processor: implement `create_identity_processor` and
    `create_element`; `create_failed_publisher` and the publisher knobs work as in
    `PublisherVerification`."""

    @abstractmethod
    def create_identity_processor(self, buffer_size: int) -> Processor[T, T]:
        """A new processor that passes its input through unchanged."""

    def processor_buffer_size(self) -> int:
        """The buffer size passed to `create_identity_processor`."""
        return TEST_BUFFER_SIZE

    def max_supported_subscribers(self) -> int:
        """Fewer than 2 skips the multi-subscriber tests."""
        return MAX_DEMAND

    def does_coordinated_emission(self) -> bool:
        """True for multicast processors that emit only when every subscriber has demand."""
        return False

    # -- the two delegations ----------------------------------------------------------------

    def create_publisher(self, elements: int) -> Publisher[T]:
        processor = self.create_identity_processor(self.processor_buffer_size())
        self.create_helper_publisher(elements).subscribe(processor)
        return processor

    def create_subscriber(self, probe: WhiteboxSubscriberProbe[T]) -> Subscriber[T]:
        processor = self.create_identity_processor(self.processor_buffer_size())
        processor.subscribe(_ProbingSubscriber(self.env, probe))
        return processor

    # -- the processor's own tests ----------------------------------------------------------

    def _multi(self) -> None:
        if self.max_supported_subscribers() < 2:
            pytest.skip("needs 2 subscribers; max_supported_subscribers() < 2")

    @required
    async def test_required_spec104_must_call_on_error_on_all_its_subscribers_if_it_encounters_a_non_recoverable_error(
        self,
    ) -> None:
        self._multi()
        setup = _Setup(self.env, self)
        first = await setup.new_subscriber()
        second = await setup.new_subscriber()
        item = setup.create_element(0)
        if self.does_coordinated_emission():
            first.request(1)
            second.request(1)
            await setup.send_upstream(item)
            await first.expect_next(item)
            await second.expect_next(item)
            first.request(1)
            second.request(1)
        else:
            first.request(1)
            await setup.send_upstream(item)
            await first.expect_next(item)
            first.request(1)
        error = TckTestError()
        setup.send_error(error)
        for sub in (first, second):
            received = await sub.error.expect_completion(
                "the processor must signal on_error to all its subscribers (rule 1.4)"
            )
            assert received is error or received == error, f"got {received!r}, not {error!r}"
        self.env.verify_no_async_errors_no_delay()

    @required
    async def test_must_immediately_pass_on_on_error_events_received_from_its_upstream_to_its_downstream(
        self,
    ) -> None:
        setup = _Setup(self.env, self)
        sub = await setup.new_subscriber()
        error = TckTestError()
        setup.send_error(error)
        received = await sub.error.expect_completion(
            "on_error from upstream must reach downstream without demand (rule 4.2)"
        )
        assert received is error or received == error, f"got {received!r}, not {error!r}"
        self.env.verify_no_async_errors_no_delay()

    @required
    async def test_required_must_request_from_upstream_for_elements_that_have_been_requested_long_ago(
        self,
    ) -> None:
        self._multi()
        setup = _Setup(self.env, self)
        first = await setup.new_subscriber()
        first.request(20)
        x, y, z = (setup.create_element(i) for i in range(3))
        await setup.send_upstream(x)
        await first.expect_next(x)
        await setup.send_upstream(y)
        await first.expect_next(y)
        second = await setup.new_subscriber()
        if self.does_coordinated_emission():
            await second.expect_none()
            second.request(1)
            await setup.send_upstream(z)
            await first.expect_next(z)
            await second.expect_next(z)
        else:
            await setup.send_upstream(z)
            await first.expect_next(z)
            await second.expect_none()
            second.request(1)
            await second.expect_next(z)
        setup.send_completion()
        await first.expect_completion()
        await second.expect_completion()
        self.env.verify_no_async_errors_no_delay()


class _Setup(ManualPublisher[T]):
    """A processor subscribed to a manual upstream, with error-collecting subscribers."""

    def __init__(
        self, env: TestEnvironment, verification: IdentityProcessorVerification[T]
    ) -> None:
        super().__init__(env)
        self.create_element = verification.create_element
        self.processor = verification.create_identity_processor(
            verification.processor_buffer_size()
        )
        self.pending = 0
        self.subscribe(self.processor)

    async def new_subscriber(self) -> _ErrorCollector[T]:
        sub: _ErrorCollector[T] = _ErrorCollector(self.env)
        await subscribe_and_wait(self.env, self.processor, sub)
        return sub

    async def send_upstream(self, item: T) -> None:
        """Send *item* upstream once the processor has asked for it."""
        while self.pending <= 0:
            self.pending += await self.expect_request("the processor did not request from upstream")
        self.pending -= 1
        self.send_next(item)


class _ErrorCollector(ManualSubscriber[T]):
    """Keeps ``on_error`` for the test instead of flopping it."""

    def __init__(self, env: TestEnvironment) -> None:
        super().__init__(env)
        self.error: Promise[BaseException] = Promise(env, "on_error (rule 1.7)")

    def on_error(self, error: BaseException) -> None:
        if error is None:
            raise TypeError("rule 2.13: on_error(None)")
        if not self.env.hand_over(self.error.complete, error):
            self.error.complete(error)


class _ProbingSubscriber(Subscriber[T]):
    """Sits behind the processor: reports to the probe; its puppet requests and cancels."""

    def __init__(self, env: TestEnvironment, probe: WhiteboxSubscriberProbe[T]) -> None:
        self.env = env
        self.probe = probe
        self.subscription: Subscription | None = None

    def on_subscribe(self, subscription: Subscription) -> None:
        if subscription is None:
            raise TypeError("rule 2.13: on_subscribe(None)")
        if self.subscription is not None:
            subscription.cancel()
            return
        self.subscription = subscription
        self.probe.register_on_subscribe(SubscriptionPuppet(subscription))

    def on_next(self, item: T) -> None:
        self.probe.register_on_next(item)

    def on_error(self, error: BaseException) -> None:
        self.probe.register_on_error(error)

    def on_complete(self) -> None:
        self.probe.register_on_complete()
