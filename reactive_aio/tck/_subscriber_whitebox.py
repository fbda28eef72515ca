"""`SubscriberWhiteboxVerification`: the 27 whitebox subscriber tests of the JVM TCK.

The subscriber under test reports every signal to a `WhiteboxSubscriberProbe` and hands it a
`SubscriberPuppet`, so the TCK can make it request or cancel and see what it received. The
TCK plays the publisher itself (a `ManualPublisher`, the "stage") and calls the subscriber's
signals on the test's stack.
"""

from __future__ import annotations

import sys
from abc import abstractmethod
from collections.abc import Callable
from types import FrameType
from typing import Generic, TypeVar

from .._core import Publisher, Subscriber, Subscription
from ._base import Verification, required, skip_untested, untested
from ._env import TestEnvironment
from ._helpers import (
    HelperPublisher,
    Latch,
    ManualPublisher,
    SubscriberPuppet,
    TckTestError,
    WhiteboxSubscriberProbe,
)

__all__ = ("SubscriberWhiteboxVerification", "call_as_sentinel", "sentinel_on_stack")

T = TypeVar("T")


def call_as_sentinel(signal: Callable[[], None]) -> None:
    """Call *signal* under a frame that `sentinel_on_stack` recognises (rule 2.3)."""
    signal()


def sentinel_on_stack() -> bool:
    """True when called (indirectly) from inside `call_as_sentinel`."""
    code = call_as_sentinel.__code__
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code is code:
            return True
        frame = frame.f_back
    return False


class SentinelSubscription(Subscription):
    """A subscription that flops any call made from inside a terminal signal (rule 2.3)."""

    def __init__(self, env: TestEnvironment, signal: str) -> None:
        self.env = env
        self.signal = signal

    def request(self, n: int) -> None:
        if sentinel_on_stack():
            self.env.flop(f"subscription.request({n}) called from {self.signal} (rule 2.3)")

    def cancel(self) -> None:
        if sentinel_on_stack():
            self.env.flop(f"subscription.cancel() called from {self.signal} (rule 2.3)")


class SecondSubscription(Subscription):
    """A second subscription offered to an already subscribed subscriber (rule 2.5)."""

    def __init__(self, env: TestEnvironment, *, request_is_error: bool) -> None:
        self.env = env
        self.cancelled = Latch(env)
        self.request_is_error = request_is_error

    def request(self, n: int) -> None:
        if self.request_is_error:
            self.env.flop(f"request({n}) on a second subscription that must be cancelled (2.5)")

    def cancel(self) -> None:
        if not self.env.hand_over(self.cancelled.close):
            self.cancelled.close()


class WhiteboxStage(ManualPublisher[T]):
    """The TCK's publisher for one whitebox test, with the probe and puppet of the subscriber."""

    def __init__(self, env: TestEnvironment, create_element: Callable[[int], T]) -> None:
        super().__init__(env)
        self.probe: WhiteboxSubscriberProbe[T] = WhiteboxSubscriberProbe(env)
        self._create_element = create_element
        self._next_id = 0
        self.puppet: SubscriberPuppet | None = None

    def the_puppet(self) -> SubscriberPuppet:
        """The puppet the subscriber registered."""
        assert self.puppet is not None
        return self.puppet

    def signal_next(self) -> T:
        """Send the next element to the subscriber and return it."""
        item = self._create_element(self._next_id)
        self._next_id += 1
        self.send_next(item)
        return item


class SubscriberWhiteboxVerification(Verification, Generic[T]):
    """Verify a subscriber that reports to a probe: implement `create_subscriber` and
    `create_element`, subclass as ``Test…``, run pytest."""

    @abstractmethod
    def create_subscriber(self, probe: WhiteboxSubscriberProbe[T]) -> Subscriber[T]:
        """A new subscriber that calls ``probe.register_on_subscribe(puppet)`` from
        ``on_subscribe`` and ``probe.register_on_next/…_complete/…_error`` from its signals."""

    @abstractmethod
    def create_element(self, element: int) -> T:
        """The element number *element* of the TCK's streams."""

    def create_helper_publisher(self, elements: int) -> Publisher[T]:
        """The asynchronous source of elements (``MAX_DEMAND`` = infinite)."""
        return HelperPublisher(elements, self.create_element)

    async def _stage(self) -> WhiteboxStage[T]:
        stage = WhiteboxStage(self.env, self.create_element)
        stage.subscribe(self.create_subscriber(stage.probe))
        stage.puppet = await stage.probe.puppet.expect_completion(
            "the subscriber did not call probe.register_on_subscribe from on_subscribe"
        )
        return stage

    # -- the tests ------------------------------------------------------------------------

    @required
    async def test_required_exercise_whitebox_happy_path(self) -> None:
        stage = await self._stage()
        puppet = stage.the_puppet()
        puppet.trigger_request(1)
        puppet.trigger_request(1)
        first = await stage.expect_request()
        await stage.probe.expect_next(stage.signal_next())
        puppet.trigger_request(1)
        if first == 1:
            await stage.expect_request()
        await stage.probe.expect_next(stage.signal_next())
        puppet.signal_cancel()
        await stage.expect_cancelling()
        await self.env.verify_no_async_errors()

    @required
    async def test_required_spec201_must_signal_demand_via_subscription_request(self) -> None:
        stage = await self._stage()
        stage.the_puppet().trigger_request(1)
        await stage.expect_request("the subscriber must signal demand with request (rule 2.1)")
        stage.signal_next()
        await self.env.verify_no_async_errors(0)

    @untested
    async def test_untested_spec202_should_asynchronously_dispatch(self) -> None:
        skip_untested("rule 2.2")

    @required
    async def test_required_spec203_must_not_call_methods_on_subscription_or_publisher_in_on_complete(
        self,
    ) -> None:
        subscriber = self.create_subscriber(WhiteboxSubscriberProbe(self.env))
        subscriber.on_subscribe(SentinelSubscription(self.env, "on_complete"))
        call_as_sentinel(subscriber.on_complete)
        await self.env.verify_no_async_errors()

    @required
    async def test_required_spec203_must_not_call_methods_on_subscription_or_publisher_in_on_error(
        self,
    ) -> None:
        subscriber = self.create_subscriber(WhiteboxSubscriberProbe(self.env))
        subscriber.on_subscribe(SentinelSubscription(self.env, "on_error"))
        call_as_sentinel(lambda: subscriber.on_error(TckTestError()))
        await self.env.verify_no_async_errors()

    @untested
    async def test_untested_spec204_must_consider_the_subscription_as_cancelled_in_after_recieving_on_complete_or_on_error(
        self,
    ) -> None:
        skip_untested("rule 2.4 (see the blackbox test_extra_spec204_…)")

    @required
    async def test_required_spec205_must_call_subscription_cancel_if_it_already_has_an_subscription_and_receives_another_on_subscribe_signal(
        self,
    ) -> None:
        stage = await self._stage()
        second = SecondSubscription(self.env, request_is_error=False)
        stage._subscriber().on_subscribe(second)
        await second.cancelled.expect_close(
            "the subscriber must cancel a second subscription (rule 2.5)"
        )
        await self.env.verify_no_async_errors()

    @untested
    async def test_untested_spec206_must_call_subscription_cancel_if_it_is_no_longer_valid(
        self,
    ) -> None:
        skip_untested("rule 2.6")

    @untested
    async def test_untested_spec207_must_ensure_all_calls_on_its_subscription_take_place_from_the_same_thread_or_take_care_of_synchronization(
        self,
    ) -> None:
        skip_untested("rule 2.7 (overlapping calls are flopped by every stage)")

    @required
    async def test_required_spec208_must_be_prepared_to_receive_on_next_signals_after_having_called_subscription_cancel(
        self,
    ) -> None:
        stage = await self._stage()
        puppet = stage.the_puppet()
        puppet.trigger_request(1)
        await stage.expect_request()
        puppet.signal_cancel()
        await stage.expect_cancelling()
        stage.signal_next()
        puppet.trigger_request(1)
        puppet.trigger_request(1)
        await self.env.verify_no_async_errors()

    @required
    async def test_required_spec209_must_be_prepared_to_receive_an_on_complete_signal_with_preceding_request_call(
        self,
    ) -> None:
        stage = await self._stage()
        stage.the_puppet().trigger_request(1)
        stage.send_completion()
        await stage.probe.expect_completion()
        await self.env.verify_no_async_errors()

    @required
    async def test_required_spec209_must_be_prepared_to_receive_an_on_complete_signal_without_preceding_request_call(
        self,
    ) -> None:
        stage = await self._stage()
        stage.send_completion()
        await stage.probe.expect_completion()
        await self.env.verify_no_async_errors()

    @required
    async def test_required_spec210_must_be_prepared_to_receive_an_on_error_signal_with_preceding_request_call(
        self,
    ) -> None:
        stage = await self._stage()
        stage.the_puppet().trigger_request(1)
        stage.the_puppet().trigger_request(1)
        error = TckTestError()
        stage.send_error(error)
        await stage.probe.expect_error(error)
        await self.env.verify_no_async_errors()

    @required
    async def test_required_spec210_must_be_prepared_to_receive_an_on_error_signal_without_preceding_request_call(
        self,
    ) -> None:
        stage = await self._stage()
        error = TckTestError()
        stage.send_error(error)
        await stage.probe.expect_error(error)
        await self.env.verify_no_async_errors()

    @untested
    async def test_untested_spec211_must_make_sure_that_all_calls_on_its_methods_happen_before_the_processing_of_the_respective_events(
        self,
    ) -> None:
        skip_untested("rule 2.11")

    @untested
    async def test_untested_spec212_must_not_call_on_subscribe_more_than_once_based_on_object_equality_spec_violation(
        self,
    ) -> None:
        skip_untested("rule 2.12")

    @untested
    async def test_untested_spec213_failing_on_signal_invocation(self) -> None:
        skip_untested("rule 2.13 for raising signals (see the publisher's test_extra_spec213_…)")

    @required
    async def test_required_spec213_on_subscribe_must_throw_null_pointer_exception_when_parameters_are_null(
        self,
    ) -> None:
        stage = await self._stage()
        _expect_type_error(lambda: stage._subscriber().on_subscribe(None), "on_subscribe(None)")  # type: ignore[arg-type]
        await self.env.verify_no_async_errors(0)

    @required
    async def test_required_spec213_on_next_must_throw_null_pointer_exception_when_parameters_are_null(
        self,
    ) -> None:
        stage = await self._stage()
        _expect_type_error(lambda: stage._subscriber().on_next(None), "on_next(None)")  # type: ignore[arg-type]
        await self.env.verify_no_async_errors(0)

    @required
    async def test_required_spec213_on_error_must_throw_null_pointer_exception_when_parameters_are_null(
        self,
    ) -> None:
        stage = await self._stage()
        _expect_type_error(lambda: stage._subscriber().on_error(None), "on_error(None)")  # type: ignore[arg-type]
        await self.env.verify_no_async_errors(0)

    @untested
    async def test_untested_spec301_must_not_be_called_outside_subscriber_context(self) -> None:
        skip_untested("rule 3.1")

    @required
    async def test_required_spec308_request_must_register_given_number_elements_to_be_produced(
        self,
    ) -> None:
        stage = await self._stage()
        stage.the_puppet().trigger_request(2)
        first = await stage.expect_request()
        await stage.probe.expect_next(stage.signal_next())
        if first < 2:
            await stage.expect_request()
        await stage.probe.expect_next(stage.signal_next())
        await stage.probe.expect_none()
        stage.the_puppet().trigger_request(3)
        await self.env.verify_no_async_errors()

    @untested
    async def test_untested_spec310_request_may_synchronously_call_on_next_on_subscriber(
        self,
    ) -> None:
        skip_untested("rule 3.10")

    @untested
    async def test_untested_spec311_request_may_synchronously_call_on_complete_or_on_error(
        self,
    ) -> None:
        skip_untested("rule 3.11")

    @untested
    async def test_untested_spec314_cancel_may_cause_the_publisher_to_shutdown_if_no_other_subscription_exists(
        self,
    ) -> None:
        skip_untested("rule 3.14")

    @untested
    async def test_untested_spec315_cancel_must_not_throw_exception_and_must_signal_on_error(
        self,
    ) -> None:
        skip_untested("rule 3.15 (see the publisher's test_extra_spec315_…)")

    @untested
    async def test_untested_spec316_request_must_not_throw_exception_and_must_on_error_the_subscriber(
        self,
    ) -> None:
        skip_untested("rule 3.16 (see the publisher's test_extra_spec316_…)")


def _expect_type_error(call: Callable[[], None], what: str) -> None:
    try:
        call()
    except TypeError:
        return
    raise AssertionError(f"{what} must raise TypeError (rule 2.13)")
