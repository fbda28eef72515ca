"""`SubscriberBlackboxVerification`: the 26 blackbox subscriber tests of the JVM TCK.

The subscriber under test knows nothing of the TCK. The TCK wraps it in a proxy that records
the signals it passes on, and plays the publisher (a `ManualPublisher`, the "stage").
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Generic, TypeVar

from .._core import Publisher, Subscriber, Subscription
from ._base import Verification, extra, required, skip_untested, untested
from ._env import TestEnvironment
from ._helpers import BlackboxProbe, HelperPublisher, ManualPublisher, TckTestError
from ._subscriber_whitebox import (
    SecondSubscription,
    SentinelSubscription,
    call_as_sentinel,
)

__all__ = ("SubscriberBlackboxVerification",)

T = TypeVar("T")


class BlackboxProxy(Subscriber[T]):
    """Records each signal in the probe, then passes it to the subscriber under test."""

    def __init__(self, probe: BlackboxProbe[T], subscriber: Subscriber[T]) -> None:
        self.probe = probe
        self.subscriber = subscriber

    def on_subscribe(self, subscription: Subscription) -> None:
        self.subscriber.on_subscribe(subscription)

    def on_next(self, item: T) -> None:
        self.probe.register_on_next(item)
        self.subscriber.on_next(item)

    def on_error(self, error: BaseException) -> None:
        self.probe.register_on_error(error)
        self.subscriber.on_error(error)

    def on_complete(self) -> None:
        self.probe.register_on_complete()
        self.subscriber.on_complete()


class BlackboxStage(ManualPublisher[T]):
    """The TCK's publisher for one blackbox test."""

    def __init__(self, env: TestEnvironment, subscriber: Subscriber[T]) -> None:
        super().__init__(env)
        self.probe: BlackboxProbe[T] = BlackboxProbe(env)
        self.target = subscriber
        self.subscribe(BlackboxProxy(self.probe, subscriber))


class SubscriberBlackboxVerification(Verification, Generic[T]):
    """Verify any subscriber: implement `create_subscriber` and `create_element`, subclass as
    ``Test…``, run pytest. Override `trigger_request` if the subscriber needs a nudge to
    request."""

    @abstractmethod
    def create_subscriber(self) -> Subscriber[T]:
        """A new subscriber under test."""

    @abstractmethod
    def create_element(self, element: int) -> T:
        """The element number *element* of the TCK's streams."""

    def trigger_request(self, subscriber: Subscriber[T]) -> None:
        """Make *subscriber* request (for subscribers that only request when told); no-op."""

    def create_helper_publisher(self, elements: int) -> Publisher[T]:
        """The asynchronous source of elements (``MAX_DEMAND`` = infinite)."""
        return HelperPublisher(elements, self.create_element)

    def _stage(self) -> BlackboxStage[T]:
        return BlackboxStage(self.env, self.create_subscriber())

    @required
    async def test_required_spec201_blackbox_must_signal_demand_via_subscription_request(
        self,
    ) -> None:
        stage = self._stage()
        self.trigger_request(stage.target)
        await stage.expect_request("the subscriber must signal demand with request (rule 2.1)")
        # The JVM TCK's element loop never runs (its issue #459): only completion is sent.
        stage.send_completion()
        await self.env.verify_no_async_errors(0)

    @untested
    async def test_untested_spec202_blackbox_should_asynchronously_dispatch(self) -> None:
        skip_untested("rule 2.2")

    @required
    async def test_required_spec203_blackbox_must_not_call_methods_on_subscription_or_publisher_in_on_complete(
        self,
    ) -> None:
        subscriber = self.create_subscriber()
        subscriber.on_subscribe(SentinelSubscription(self.env, "on_complete"))
        call_as_sentinel(subscriber.on_complete)
        await self.env.verify_no_async_errors()

    @required
    async def test_required_spec203_blackbox_must_not_call_methods_on_subscription_or_publisher_in_on_error(
        self,
    ) -> None:
        subscriber = self.create_subscriber()
        subscriber.on_subscribe(SentinelSubscription(self.env, "on_error"))
        call_as_sentinel(lambda: subscriber.on_error(TckTestError()))
        await self.env.verify_no_async_errors()

    @untested
    async def test_untested_spec204_blackbox_must_consider_the_subscription_as_cancelled_in_after_recieving_on_complete_or_on_error(
        self,
    ) -> None:
        skip_untested("rule 2.4 (see test_extra_spec204_…)")

    @required
    async def test_required_spec205_blackbox_must_call_subscription_cancel_if_it_already_has_an_subscription_and_receives_another_on_subscribe_signal(
        self,
    ) -> None:
        stage = self._stage()
        second = SecondSubscription(self.env, request_is_error=True)
        stage.target.on_subscribe(second)
        await second.cancelled.expect_close(
            "the subscriber must cancel a second subscription (rule 2.5)"
        )
        await self.env.verify_no_async_errors()
        stage.send_completion()

    @untested
    async def test_untested_spec206_blackbox_must_call_subscription_cancel_if_it_is_no_longer_valid(
        self,
    ) -> None:
        skip_untested("rule 2.6")

    @untested
    async def test_untested_spec207_blackbox_must_ensure_all_calls_on_its_subscription_take_place_from_the_same_thread_or_take_care_of_synchronization(
        self,
    ) -> None:
        skip_untested("rule 2.7 (overlapping calls are flopped by every stage)")

    @untested
    async def test_untested_spec208_blackbox_must_be_prepared_to_receive_on_next_signals_after_having_called_subscription_cancel(
        self,
    ) -> None:
        skip_untested("rule 2.8 needs the whitebox puppet")

    @required
    async def test_required_spec209_blackbox_must_be_prepared_to_receive_an_on_complete_signal_with_preceding_request_call(
        self,
    ) -> None:
        stage = self._stage()
        self.trigger_request(stage.target)
        await stage.expect_request()
        stage.send_completion()
        await stage.probe.expect_completion()
        await self.env.verify_no_async_errors(0)

    @required
    async def test_required_spec209_blackbox_must_be_prepared_to_receive_an_on_complete_signal_without_preceding_request_call(
        self,
    ) -> None:
        stage = self._stage()
        stage.send_completion()
        await stage.probe.expect_completion()
        await self.env.verify_no_async_errors(0)

    @required
    async def test_required_spec210_blackbox_must_be_prepared_to_receive_an_on_error_signal_with_preceding_request_call(
        self,
    ) -> None:
        stage = self._stage()
        self.trigger_request(stage.target)
        await stage.expect_request()
        stage.send_error(TckTestError())
        await stage.probe.expect_error(Exception)
        await self.env.verify_no_async_errors(0)

    @required
    async def test_required_spec210_blackbox_must_be_prepared_to_receive_an_on_error_signal_without_preceding_request_call(
        self,
    ) -> None:
        stage = self._stage()
        stage.send_error(TckTestError())
        await stage.probe.expect_error(Exception)
        await self.env.verify_no_async_errors(0)

    @untested
    async def test_untested_spec211_blackbox_must_make_sure_that_all_calls_on_its_methods_happen_before_the_processing_of_the_respective_events(
        self,
    ) -> None:
        skip_untested("rule 2.11")

    @untested
    async def test_untested_spec212_blackbox_must_not_call_on_subscribe_more_than_once_based_on_object_equality(
        self,
    ) -> None:
        skip_untested("rule 2.12")

    @untested
    async def test_untested_spec213_blackbox_failing_on_signal_invocation(self) -> None:
        skip_untested("rule 2.13 for raising signals")

    @required
    async def test_required_spec213_blackbox_on_subscribe_must_throw_null_pointer_exception_when_parameters_are_null(
        self,
    ) -> None:
        subscriber = self.create_subscriber()
        _expect_type_error(lambda: subscriber.on_subscribe(None), "on_subscribe(None)")  # type: ignore[arg-type]
        await self.env.verify_no_async_errors(0)

    @required
    async def test_required_spec213_blackbox_on_next_must_throw_null_pointer_exception_when_parameters_are_null(
        self,
    ) -> None:
        subscriber = self.create_subscriber()
        subscriber.on_subscribe(_IgnoringSubscription())
        _expect_type_error(lambda: subscriber.on_next(None), "on_next(None)")  # type: ignore[arg-type]
        await self.env.verify_no_async_errors(0)

    @required
    async def test_required_spec213_blackbox_on_error_must_throw_null_pointer_exception_when_parameters_are_null(
        self,
    ) -> None:
        subscriber = self.create_subscriber()
        subscriber.on_subscribe(_IgnoringSubscription())
        _expect_type_error(lambda: subscriber.on_error(None), "on_error(None)")  # type: ignore[arg-type]
        await self.env.verify_no_async_errors(0)

    @untested
    async def test_untested_spec301_blackbox_must_not_be_called_outside_subscriber_context(
        self,
    ) -> None:
        skip_untested("rule 3.1")

    @untested
    async def test_untested_spec308_blackbox_request_must_register_given_number_elements_to_be_produced(
        self,
    ) -> None:
        skip_untested("rule 3.8 needs the whitebox probe")

    @untested
    async def test_untested_spec310_blackbox_request_may_synchronously_call_on_next_on_subscriber(
        self,
    ) -> None:
        skip_untested("rule 3.10")

    @untested
    async def test_untested_spec311_blackbox_request_may_synchronously_call_on_complete_or_on_error(
        self,
    ) -> None:
        skip_untested("rule 3.11")

    @untested
    async def test_untested_spec314_blackbox_cancel_may_cause_the_publisher_to_shutdown_if_no_other_subscription_exists(
        self,
    ) -> None:
        skip_untested("rule 3.14")

    @untested
    async def test_untested_spec315_blackbox_cancel_must_not_throw_exception_and_must_signal_on_error(
        self,
    ) -> None:
        skip_untested("rule 3.15")

    @untested
    async def test_untested_spec316_blackbox_request_must_not_throw_exception_and_must_on_error_the_subscriber(
        self,
    ) -> None:
        skip_untested("rule 3.16")

    # -- reactive_aio's checks beyond the official TCK -------------------------------------

    @extra
    async def test_extra_spec204_blackbox_must_not_request_after_on_complete(self) -> None:
        await self._no_request_after_terminal(error=False)

    @extra
    async def test_extra_spec204_blackbox_must_not_request_after_on_error(self) -> None:
        await self._no_request_after_terminal(error=True)

    async def _no_request_after_terminal(self, *, error: bool) -> None:
        stage = self._stage()
        self.trigger_request(stage.target)
        await stage.expect_request()
        if error:
            stage.send_error(TckTestError())
        else:
            stage.send_completion()
        stage.requests.clear()
        await self.env.verify_no_async_errors()
        assert not stage.requests, (
            f"request({stage.requests[0]}) after on_{'error' if error else 'complete'}: the "
            "subscription must be considered cancelled (rule 2.4)"
        )


class _IgnoringSubscription(Subscription):
    def request(self, n: int) -> None:
        pass

    def cancel(self) -> None:
        pass


def _expect_type_error(call: object, what: str) -> None:
    assert callable(call)
    try:
        call()
    except TypeError:
        return
    raise AssertionError(f"{what} must raise TypeError (rule 2.13)")
