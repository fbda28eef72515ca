"""`PublisherVerification`: the 38 publisher tests of the JVM TCK plus reactive_aio's extras."""

from __future__ import annotations

import asyncio
import gc
import random
import threading
import time
import weakref
from abc import abstractmethod
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

import pytest

from .._core import MAX_DEMAND, Publisher, Subscriber, Subscription
from ._base import (
    Verification,
    extra,
    optional,
    required,
    skip_optional,
    skip_untested,
    stochastic,
    untested,
)
from ._env import TestEnvironment
from ._helpers import BlackholeSubscriber, Latch, ManualSubscriber, Promise, subscribe_and_wait

__all__ = ("PublisherVerification",)

T = TypeVar("T")

STOCHASTIC_ITERATIONS = 100
"""Runs of the rule 1.3 check (as in the JVM TCK)."""
YIELD_CHECK_ELEMENTS = 20_000
"""Elements an unbounded request may deliver before the loop must have had a turn."""


class PublisherVerification(Verification, Generic[T]):
    """Verify a publisher: subclass it as ``Test…``, implement `create_publisher`, run pytest.

    Knobs (override the methods): `create_failed_publisher`, `max_elements_from_publisher`,
    `bounded_depth_of_on_next_and_request_recursion`, `skip_stochastic_tests`.
    """

    # -- what the user supplies -----------------------------------------------------------

    @abstractmethod
    def create_publisher(self, elements: int) -> Publisher[T]:
        """A publisher of exactly *elements* items (``MAX_DEMAND`` means infinite).

        Tests ask for 0, 1, 3, 5, 6, 10, 20 and ``2**31 - 1`` elements (the last must be lazy).
        """

    def create_failed_publisher(self) -> Publisher[T] | None:
        """A publisher that signals ``on_subscribe`` then ``on_error``; None skips those tests."""
        return None

    def max_elements_from_publisher(self) -> int:
        """Tests needing more elements skip; ``MAX_DEMAND`` means "never completes"."""
        return MAX_DEMAND - 1

    def bounded_depth_of_on_next_and_request_recursion(self) -> int:
        """How deep ``on_next`` → ``request`` → ``on_next`` may nest (rule 3.3)."""
        return 1

    def skip_stochastic_tests(self) -> bool:
        """True skips the stochastic rule 1.3 test."""
        return False

    # -- plumbing -------------------------------------------------------------------------

    def _publisher(self, elements: int, *, completes: bool = False) -> Publisher[T]:
        limit = self.max_elements_from_publisher()
        if elements > limit:
            pytest.skip(f"needs {elements} elements; max_elements_from_publisher() is {limit}")
        if completes and limit == MAX_DEMAND:
            pytest.skip("needs on_complete; the publisher never completes")
        return self.create_publisher(elements)

    def _failed_publisher(self) -> Publisher[T]:
        publisher = self.create_failed_publisher()
        if publisher is None:
            pytest.skip("create_failed_publisher() returned None")
        return publisher

    async def _manual(self, publisher: Publisher[T], *, verify: bool = True) -> ManualSubscriber[T]:
        return await subscribe_and_wait(
            self.env, publisher, ManualSubscriber(self.env), verify=verify
        )

    async def _optional(self, body: Callable[[], Awaitable[None]]) -> None:
        try:
            await body()
        except Exception as exc:
            skip_optional(exc)

    # -- setup and configuration ----------------------------------------------------------

    @required
    async def test_required_create_publisher1_must_produce_a_stream_of_exactly1_element(
        self,
    ) -> None:
        sub = await self._manual(self._publisher(1, completes=True))
        await sub.request_next_element("create_publisher(1) produced no element")
        await sub.request_end_of_stream("create_publisher(1) did not complete after one element")
        self.env.verify_no_async_errors_no_delay()

    @required
    async def test_required_create_publisher3_must_produce_a_stream_of_exactly3_elements(
        self,
    ) -> None:
        sub = await self._manual(self._publisher(3, completes=True))
        for i in range(3):
            await sub.request_next_element(f"create_publisher(3) produced only {i} elements")
        await sub.request_end_of_stream("create_publisher(3) did not complete after 3 elements")
        self.env.verify_no_async_errors_no_delay()

    @required
    async def test_required_validate_max_elements_from_publisher(self) -> None:
        assert self.max_elements_from_publisher() >= 0, "max_elements_from_publisher() < 0"

    @required
    async def test_required_validate_bounded_depth_of_on_next_and_request_recursion(self) -> None:
        depth = self.bounded_depth_of_on_next_and_request_recursion()
        assert depth >= 1, f"bounded_depth_of_on_next_and_request_recursion() is {depth} < 1"

    # -- section 1 ------------------------------------------------------------------------

    @required
    async def test_required_spec101_subscription_request_must_result_in_the_correct_number_of_produced_elements(
        self,
    ) -> None:
        sub = await self._manual(self._publisher(5))
        try:
            await sub.expect_none("no element may arrive before a request (rule 1.1)")
            await sub.request_next_element("request(1) produced no element (rule 1.1)")
            await sub.expect_none("only one element was requested (rule 1.1)")
            sub.request(1)
            sub.request(2)
            await sub.next_elements(3, "request(1) + request(2) must produce 3 elements")
            await sub.expect_none("only three more elements were requested (rule 1.1)")
        finally:
            sub.cancel()
        self.env.verify_no_async_errors_no_delay()

    @required
    async def test_required_spec102_may_signal_less_than_requested_and_terminate_subscription(
        self,
    ) -> None:
        sub = await self._manual(self._publisher(3, completes=True))
        sub.request(10)
        await sub.next_elements(3, "expected 3 elements after request(10)")
        await sub.expect_completion("expected on_complete after the 3 elements (rule 1.2)")
        self.env.verify_no_async_errors_no_delay()

    @stochastic
    async def test_stochastic_spec103_must_signal_on_methods_sequentially(self) -> None:
        if self.skip_stochastic_tests():
            pytest.skip("skip_stochastic_tests() is True")
        env = self.env
        for _ in range(STOCHASTIC_ITERATIONS):
            publisher = self._publisher(10, completes=True)
            done = Latch(env)
            publisher.subscribe(_SerialSignalsProbe(env, done, 11))
            await done.expect_close(
                "the stochastic rule 1.3 subscriber did not terminate", 10 * env.timeout
            )
            env.verify_no_async_errors_no_delay()

    @optional
    async def test_optional_spec104_must_signal_on_error_when_fails(self) -> None:
        # Not soft: a failed publisher, once supplied, must fail through on_error.
        env = self.env
        publisher = self._failed_publisher()
        probe: _OnlyErrorSubscriber[T] = _OnlyErrorSubscriber(env)
        try:
            publisher.subscribe(probe)
        except Exception as exc:
            raise AssertionError(
                f"publisher raised {exc!r} from subscribe instead of signalling on_error (rule 1.4)"
            ) from exc
        await probe.subscription.expect_completion("failed publisher: no on_subscribe (rule 1.9)")
        await probe.error.expect_completion("failed publisher: no on_error (rule 1.4)")
        await env.verify_no_async_errors()

    @required
    async def test_required_spec105_must_signal_on_complete_when_finite_stream_terminates(
        self,
    ) -> None:
        sub = await self._manual(self._publisher(3, completes=True))
        for _ in range(3):
            await sub.request_next_element()
        await sub.request_end_of_stream("expected on_complete after the last element (rule 1.5)")
        await sub.expect_none("nothing may follow on_complete (rule 1.7)")
        self.env.verify_no_async_errors_no_delay()

    @optional
    async def test_optional_spec105_empty_stream_must_terminate_by_signalling_on_complete(
        self,
    ) -> None:
        publisher = self._publisher(0, completes=True)

        async def body() -> None:
            sub = await self._manual(publisher)
            sub.request(1)
            await sub.expect_completion("an empty stream must signal on_complete (rule 1.5)")
            await sub.expect_none("nothing may follow on_complete (rule 1.7)")
            self.env.verify_no_async_errors_no_delay()

        await self._optional(body)

    @untested
    async def test_untested_spec106_must_consider_subscription_cancelled_after_on_error_or_on_complete_has_been_called(
        self,
    ) -> None:
        skip_untested("rule 1.6 (see test_extra_spec106_…)")

    @required
    async def test_required_spec107_must_not_emit_further_signals_once_on_complete_has_been_signalled(
        self,
    ) -> None:
        sub = await self._manual(self._publisher(1, completes=True))
        sub.request(10)
        await sub.next_element()
        await sub.expect_completion()
        sub.request(10)
        await sub.expect_none("no signal may follow on_complete (rule 1.7)")
        self.env.verify_no_async_errors_no_delay()

    @untested
    async def test_untested_spec107_must_not_emit_further_signals_once_on_error_has_been_signalled(
        self,
    ) -> None:
        skip_untested("rule 1.7 after on_error (see test_extra_spec107_…)")

    @untested
    async def test_untested_spec108_possibly_canceled_subscription_should_not_receive_on_error_or_on_complete_signals(
        self,
    ) -> None:
        skip_untested("rule 1.8 (see test_extra_spec108_…)")

    @untested
    async def test_untested_spec109_subscribe_should_not_throw_non_fatal_throwable(self) -> None:
        skip_untested("rule 1.9: subscribe must not raise")

    @required
    async def test_required_spec109_subscribe_throw_npe_on_null_subscriber(self) -> None:
        publisher = self._publisher(0)
        try:
            publisher.subscribe(None)  # type: ignore[arg-type]
        except TypeError:
            return
        raise AssertionError("subscribe(None) must raise TypeError (rule 1.9)")

    @required
    async def test_required_spec109_must_issue_on_subscribe_for_non_null_subscriber(
        self,
    ) -> None:
        env = self.env
        probe: _OnSubscribeFirstSubscriber[T] = _OnSubscribeFirstSubscriber(env)
        self._publisher(0).subscribe(probe)
        try:
            await probe.subscription.expect_completion(
                "on_subscribe must be called for a non-None subscriber (rule 1.9)"
            )
        finally:
            if probe.subscription.is_completed:
                probe.subscription.value().cancel()
        env.verify_no_async_errors_no_delay()

    @required
    async def test_required_spec109_may_reject_calls_to_subscribe_if_publisher_is_unable_or_unwilling_to_serve_them_rejection_must_trigger_on_error_after_on_subscribe(
        self,
    ) -> None:
        env = self.env
        publisher = self._failed_publisher()
        probe: _OnlyErrorSubscriber[T] = _OnlyErrorSubscriber(env)
        publisher.subscribe(probe)
        await probe.subscription.expect_completion("rejection: no on_subscribe (rule 1.9)")
        await probe.error.expect_completion("rejection: no on_error after on_subscribe (rule 1.9)")
        env.verify_no_async_errors_no_delay()

    @untested
    async def test_untested_spec110_reject_a_subscription_request_if_the_same_subscriber_subscribes_twice(
        self,
    ) -> None:
        skip_untested("rule 1.10")

    @optional
    async def test_optional_spec111_may_support_multi_subscribe(self) -> None:
        publisher = self._publisher(1)

        async def body() -> None:
            first = await self._manual(publisher)
            second = await self._manual(publisher)
            await self.env.verify_no_async_errors()
            first.cancel()
            second.cancel()

        await self._optional(body)

    @optional
    async def test_optional_spec111_registered_subscribers_must_receive_on_next_or_on_complete_signals(
        self,
    ) -> None:
        publisher = self._publisher(1)

        async def body() -> None:
            first = await self._manual(publisher)
            second = await self._manual(publisher)
            first.request(1)
            second.request(1)
            await first.next_element_or_end_of_stream()
            await second.next_element_or_end_of_stream()
            await self.env.verify_no_async_errors()
            first.cancel()
            second.cancel()

        await self._optional(body)

    @optional
    async def test_optional_spec111_multicast_must_produce_the_same_elements_in_the_same_sequence_to_all_of_its_subscribers_when_requesting_one_by_one(
        self,
    ) -> None:
        publisher = self._publisher(5, completes=True)

        async def body() -> None:
            subs = [await self._manual(publisher) for _ in range(3)]
            received: list[list[T]] = [[], [], []]
            # Interleaved small requests; every subscriber ends up asking for 5 + 1.
            plan = [(0, 1), (1, 2), (2, 1), (0, 3), (1, 1), (2, 3), (0, 1), (1, 2), (2, 1)]
            plan += [(0, 1), (1, 1), (2, 1)]
            asked = [0, 0, 0]
            for index, n in plan:
                n = min(n, 6 - asked[index])
                if n:
                    asked[index] += n
                    subs[index].request(n)
            for index, sub in enumerate(subs):
                received[index] = await sub.next_elements(5)
                await sub.expect_completion()
            assert received[0] == received[1] == received[2], (
                f"subscribers received different sequences: {received!r}"
            )
            self.env.verify_no_async_errors_no_delay()

        await self._optional(body)

    @optional
    async def test_optional_spec111_multicast_must_produce_the_same_elements_in_the_same_sequence_to_all_of_its_subscribers_when_requesting_many_upfront(
        self,
    ) -> None:
        await self._many_upfront(complete=False)

    @optional
    async def test_optional_spec111_multicast_must_produce_the_same_elements_in_the_same_sequence_to_all_of_its_subscribers_when_requesting_many_upfront_and_complete_as_expected(
        self,
    ) -> None:
        await self._many_upfront(complete=True)

    async def _many_upfront(self, *, complete: bool) -> None:
        publisher = self._publisher(3, completes=complete)

        async def body() -> None:
            subs = [await self._manual(publisher) for _ in range(3)]
            for sub in subs:
                sub.request(4)
            received = [await sub.next_elements(3) for sub in subs]
            if complete:
                for sub in subs:
                    await sub.expect_completion()
            assert received[0] == received[1] == received[2], (
                f"subscribers received different sequences: {received!r}"
            )
            self.env.verify_no_async_errors_no_delay()

        await self._optional(body)

    # -- section 3 ------------------------------------------------------------------------

    @required
    async def test_required_spec302_must_allow_synchronous_request_calls_from_on_next_and_on_subscribe(
        self,
    ) -> None:
        env = self.env
        sub: _SyncRequester[T] = _SyncRequester(env)
        self._publisher(6).subscribe(sub)
        try:
            await sub.subscription.expect_completion("no on_subscribe (rule 1.9)")
            await env.verify_no_async_errors()
        finally:
            if sub.subscription.is_completed:
                sub.subscription.value().cancel()

    @required
    async def test_required_spec303_must_not_allow_unbounded_recursion(self) -> None:
        env = self.env
        bound = self.bounded_depth_of_on_next_and_request_recursion()
        done = Latch(env)
        sub: _RecursionProbe[T] = _RecursionProbe(env, done, bound)
        self._publisher(bound + 1).subscribe(sub)
        try:
            await done.expect_close(
                "unable to validate call stack depth safety: too few signals (rule 3.3)"
            )
        finally:
            sub.cancel()
        env.verify_no_async_errors_no_delay()

    @untested
    async def test_untested_spec304_request_should_not_perform_heavy_computations(self) -> None:
        skip_untested("rule 3.4 (see test_extra_spec304_…)")

    @untested
    async def test_untested_spec305_cancel_must_not_synchronously_perform_heavy_computation(
        self,
    ) -> None:
        skip_untested("rule 3.5 (see test_extra_spec305_…)")

    @required
    async def test_required_spec306_after_subscription_is_cancelled_request_must_be_nops(
        self,
    ) -> None:
        sub = await self._manual(self._publisher(3))
        sub.cancel()
        for _ in range(3):
            sub.request(1)
        await sub.expect_none("request after cancel must be a no-op (rule 3.6)")
        self.env.verify_no_async_errors_no_delay()

    @required
    async def test_required_spec307_after_subscription_is_cancelled_additional_cancelations_must_be_nops(
        self,
    ) -> None:
        sub = await self._manual(self._publisher(1))
        for _ in range(3):
            sub.cancel()
        await sub.expect_none("cancel after cancel must be a no-op (rule 3.7)")
        await self.env.verify_no_async_errors()

    @required
    async def test_required_spec309_request_zero_must_signal_illegal_argument_exception(
        self,
    ) -> None:
        sub = await self._manual(self._publisher(10))
        sub.request(0)
        await self.env.expect_error(
            ValueError, message="request(0) must signal on_error (rule 3.9)"
        )
        self.env.verify_no_async_errors_no_delay()

    @required
    async def test_required_spec309_request_negative_number_must_signal_illegal_argument_exception(
        self,
    ) -> None:
        sub = await self._manual(self._publisher(10))
        n = random.randint(-(2**31 - 1), -1)
        sub.request(n)
        await self.env.expect_error(
            ValueError, message=f"request({n}) must signal on_error (rule 3.9)"
        )
        self.env.verify_no_async_errors_no_delay()

    @optional
    async def test_optional_spec309_request_negative_number_may_signal_illegal_argument_exception_with_specific_message(
        self,
    ) -> None:
        publisher = self._publisher(10)

        async def body() -> None:
            sub = await self._manual(publisher)
            sub.request(random.randint(-(2**31 - 1), -1))
            error = await self.env.expect_error(ValueError)
            message = str(error)
            wanted = ("3.9", "non-positive subscription request", "negative subscription request")
            assert any(w in message for w in wanted), (
                f"the message {message!r} names neither rule 3.9 nor the bad request"
            )

        await self._optional(body)

    @required
    async def test_required_spec312_cancel_must_make_the_publisher_to_eventually_stop_signaling(
        self,
    ) -> None:
        sub = await self._manual(self._publisher(20))
        sub.request(10)
        sub.request(5)
        await sub.next_element()
        sub.cancel()
        received = 1
        while True:  # elements in flight may still arrive; they must stop within the demand
            arrived = await sub.received.drain(self.env.no_signals_timeout)
            if not arrived:
                break
            received += arrived
            if received > 15:
                raise AssertionError(
                    f"after cancel the publisher kept signalling: {received} elements "
                    "for a demand of 15 (rule 3.12)"
                )
        self.env.verify_no_async_errors_no_delay()

    @required
    async def test_required_spec313_cancel_must_make_the_publisher_eventually_drop_all_references_to_the_subscriber(
        self,
    ) -> None:
        publisher = self._publisher(3)

        async def use_and_cancel() -> weakref.ref[ManualSubscriber[T]]:
            sub = await self._manual(publisher)
            sub.request(1)
            await sub.next_element()
            sub.cancel()
            return weakref.ref(sub)

        ref = await use_and_cancel()
        await _expect_collected(self.env, ref, "after cancel (rule 3.13)")
        self.env.verify_no_async_errors_no_delay()

    @required
    async def test_required_spec317_must_support_a_pending_element_count_up_to_long_max_value(
        self,
    ) -> None:
        sub = await self._manual(self._publisher(3, completes=True))
        sub.request(MAX_DEMAND)
        await sub.next_elements(3)
        await sub.expect_completion()
        self.env.verify_no_async_errors_no_delay()

    @required
    async def test_required_spec317_must_support_a_cumulative_pending_element_count_up_to_long_max_value(
        self,
    ) -> None:
        sub = await self._manual(self._publisher(3, completes=True))
        sub.request(MAX_DEMAND // 2)
        sub.request(MAX_DEMAND // 2)
        sub.request(1)
        await sub.next_elements(3)
        await sub.expect_completion()
        self.env.verify_no_async_errors_no_delay()
        sub.cancel()

    @required
    async def test_required_spec317_must_not_signal_on_error_when_pending_above_long_max_value(
        self,
    ) -> None:
        env = self.env
        sub: _OverflowingRequester[T] = _OverflowingRequester(env)
        try:
            await subscribe_and_wait(env, self._publisher(2**31 - 1), sub)
            sub.request(1)
            await env.verify_no_async_errors()
        finally:
            sub.cancel()

    # -- reactive_aio's checks beyond the official TCK -------------------------------------

    @extra
    async def test_extra_spec103_signals_must_never_nest(self) -> None:
        env = self.env
        done = Latch(env)
        self._publisher(10, completes=True).subscribe(_NestingProbe(env, done))
        await done.expect_close("the stream did not complete")
        env.verify_no_async_errors_no_delay()

    @extra
    async def test_extra_spec313_cancel_must_drop_the_subscriber_while_the_subscription_is_held(
        self,
    ) -> None:
        # The official test with one change: the test keeps the Subscription, as a registry of
        # subscriptions or a foreign runtime holding a handle does (the JVM TCK run through a
        # bridge). The Subscription must not be what keeps the subscriber alive.
        publisher = self._publisher(3)
        held: list[Subscription] = []

        async def use_and_cancel() -> weakref.ref[ManualSubscriber[T]]:
            sub = await self._manual(publisher)
            held.append(sub.subscription.value())
            sub.request(1)
            await sub.next_element()
            sub.cancel()
            return weakref.ref(sub)

        ref = await use_and_cancel()
        await _expect_collected(self.env, ref, "after cancel while the subscription is held (3.13)")
        self.env.verify_no_async_errors_no_delay()
        held.clear()  # held until after the check

    @extra
    async def test_extra_spec106_must_drop_the_subscriber_after_on_complete(self) -> None:
        publisher = self._publisher(1, completes=True)
        held: list[Subscription] = []  # held, as in the rule 3.13 test above

        async def run_to_completion() -> weakref.ref[ManualSubscriber[T]]:
            sub = await self._manual(publisher)
            held.append(sub.subscription.value())
            sub.request(2)
            await sub.next_element()
            await sub.expect_completion()
            return weakref.ref(sub)

        ref = await run_to_completion()
        await _expect_collected(self.env, ref, "after on_complete (rules 1.6, 3.13)")
        self.env.verify_no_async_errors_no_delay()
        held.clear()  # held until after the check

    @extra
    async def test_extra_spec106_must_drop_the_subscriber_after_on_error(self) -> None:
        publisher = self._failed_publisher()
        held: list[Subscription] = []

        async def run_to_error() -> weakref.ref[ManualSubscriber[T]]:
            sub = await self._manual(publisher, verify=False)
            held.append(sub.subscription.value())
            await self.env.expect_error(Exception)
            return weakref.ref(sub)

        ref = await run_to_error()
        await _expect_collected(self.env, ref, "after on_error (rules 1.6, 3.13)")
        self.env.verify_no_async_errors_no_delay()
        held.clear()  # held until after the check

    @extra
    async def test_extra_spec107_must_not_emit_further_signals_once_on_error_has_been_signalled(
        self,
    ) -> None:
        sub = await self._manual(self._failed_publisher(), verify=False)
        await self.env.expect_error(Exception, message="the failed publisher must signal on_error")
        sub.request(10)
        await sub.expect_none("no signal may follow on_error (rule 1.7)")
        await self.env.verify_no_async_errors(0)

    @extra
    async def test_extra_spec108_cancel_from_on_next_must_suppress_on_complete(self) -> None:
        env = self.env
        sub: _CancelOnLast[T] = _CancelOnLast(env, last=3)
        await subscribe_and_wait(env, self._publisher(3, completes=True), sub)
        sub.request(3)
        await sub.next_elements(3)
        await sub.expect_none("a subscription cancelled in on_next may not complete (rule 1.8)")
        env.verify_no_async_errors_no_delay()

    @extra
    async def test_extra_spec213_must_cancel_and_report_when_on_next_raises(self) -> None:
        env = self.env
        reported: list[object] = []
        loop = asyncio.get_running_loop()
        previous = loop.get_exception_handler()
        loop.set_exception_handler(lambda _loop, ctx: reported.append(ctx.get("exception")))
        try:
            sub: _RaisingOnNext[T] = _RaisingOnNext(env)
            await subscribe_and_wait(env, self._publisher(5), sub)
            sub.request(5)
            await sub.next_element()
            await sub.expect_none("signals after on_next raised (rule 2.13: treat as cancelled)")
            env.verify_no_async_errors_no_delay()
            assert any(r is sub.failure for r in reported), (
                "the error raised by on_next was not reported to the loop's exception "
                "handler (rule 2.13)"
            )
        finally:
            loop.set_exception_handler(previous)

    @extra
    async def test_extra_spec304_unbounded_demand_must_yield_to_the_event_loop(self) -> None:
        env = self.env
        sub: _YieldProbe[T] = _YieldProbe(env)
        await subscribe_and_wait(env, self._publisher(2**31 - 1), sub)
        asyncio.get_running_loop().call_soon(sub.tick)
        sub.request(MAX_DEMAND)
        await sub.done.expect_close("too few elements for the yield check", 100 * env.timeout)
        env.verify_no_async_errors_no_delay()

    @extra
    async def test_extra_spec305_cancel_from_another_thread_must_stop_the_publisher(
        self,
    ) -> None:
        sub = await self._manual(self._publisher(20))
        await sub.request_next_element()
        await asyncio.to_thread(sub.cancel)
        sub.request(5)
        await sub.expect_none("elements after a cancel from another thread (rules 3.5, 3.6)")
        self.env.verify_no_async_errors_no_delay()

    @extra
    async def test_extra_spec309_request_zero_must_cancel_the_subscription(self) -> None:
        sub = await self._manual(self._publisher(10))
        sub.request(0)
        await self.env.expect_error(ValueError, message="request(0) must signal on_error")
        sub.request(5)
        await sub.expect_none("signals after the rule 3.9 error (rules 1.7, 3.9)")
        self.env.verify_no_async_errors_no_delay()

    @extra
    async def test_extra_spec315_cancel_and_request_must_return_normally_after_termination(
        self,
    ) -> None:
        sub = await self._manual(self._publisher(1, completes=True))
        subscription = sub.subscription.value()
        request: Callable[[int], object] = subscription.request
        cancel: Callable[[], object] = subscription.cancel
        results = [request(2)]  # one more than the stream has, so on_complete needs no request
        await sub.next_element()
        await sub.expect_completion()
        results += [request(1), cancel(), cancel(), request(0)]
        assert results == [None] * 5, f"request/cancel returned {results!r} (rules 3.15, 3.16)"
        await sub.expect_none("signals after on_complete")
        self.env.verify_no_async_errors_no_delay()

    @extra
    async def test_extra_spec316_request_from_another_thread_must_be_honoured(self) -> None:
        sub = await self._manual(self._publisher(5, completes=True))
        await asyncio.to_thread(sub.request, 6)
        await sub.next_elements(5, "a request from another thread was not served (rule 3.16)")
        await sub.expect_completion()
        self.env.verify_no_async_errors_no_delay()


async def _expect_collected(env: TestEnvironment, ref: weakref.ref[Any], when: str) -> None:
    await asyncio.sleep(env.gc_timeout)
    # Most publishers drop the subscriber outright: a full collection (whose cost grows with
    # everything the test run keeps alive) is only needed to tell a cycle from a leak.
    if ref() is None:
        return
    for _ in range(3):
        gc.collect()
        if ref() is None:
            return
        await asyncio.sleep(0)
    raise AssertionError(f"the publisher did not drop its reference to the subscriber {when}")


# -- the TCK's raw subscribers -------------------------------------------------------------


class _RawSubscriber(Subscriber[T]):
    """A subscriber that records its subscription and flops every signal it does not expect."""

    def __init__(self, env: TestEnvironment) -> None:
        self.env = env
        self.subscription: Promise[Subscription] = Promise(env, "the subscription")

    def on_subscribe(self, subscription: Subscription) -> None:
        if subscription is None:
            raise TypeError("rule 2.13: on_subscribe(None)")
        if self.subscription.is_completed:
            self.env.flop("on_subscribe called twice (rule 1.9)")
            subscription.cancel()
            return
        self.subscription.complete(subscription)

    def on_next(self, item: T) -> None:
        self.env.flop(f"unexpected on_next({item!r})")

    def on_error(self, error: BaseException) -> None:
        self.env.flop(error)

    def on_complete(self) -> None:
        self.env.flop("unexpected on_complete")

    def cancel(self) -> None:
        if self.subscription.is_completed:
            self.subscription.value().cancel()


class _OnlyErrorSubscriber(_RawSubscriber[T]):
    def __init__(self, env: TestEnvironment) -> None:
        super().__init__(env)
        self.error: Promise[BaseException] = Promise(env, "on_error (rule 1.7)")

    def on_error(self, error: BaseException) -> None:
        if not self.subscription.is_completed:
            self.env.flop(f"on_error({error!r}) before on_subscribe (rule 1.9)")
        self.error.complete(error)


class _OnSubscribeFirstSubscriber(_RawSubscriber[T]):
    def on_next(self, item: T) -> None:
        if not self.subscription.is_completed:
            self.env.flop(f"on_next({item!r}) before on_subscribe (rule 1.9)")

    def on_complete(self) -> None:
        if not self.subscription.is_completed:
            self.env.flop("on_complete before on_subscribe (rule 1.9)")

    def on_error(self, error: BaseException) -> None:
        if not self.subscription.is_completed:
            self.env.flop(f"on_error({error!r}) before on_subscribe (rule 1.9)")


class _SyncRequester(_OnSubscribeFirstSubscriber[T]):
    """Requests synchronously from on_subscribe (three times) and from every on_next."""

    def on_subscribe(self, subscription: Subscription) -> None:
        super().on_subscribe(subscription)
        for _ in range(3):
            subscription.request(1)

    def on_next(self, item: T) -> None:
        self.subscription.value().request(1)

    def on_error(self, error: BaseException) -> None:
        self.env.flop(error)


class _SerialSignalsProbe(_RawSubscriber[T]):
    """Rule 1.3: signals from different threads must never overlap."""

    def __init__(self, env: TestEnvironment, done: Latch, budget: int) -> None:
        super().__init__(env)
        self.done = done
        self.budget = budget
        self._lock = threading.Lock()
        self._inside: int | None = None
        self._depth = 0

    def _signal(self, what: str, action: Callable[[], None]) -> None:
        me = threading.get_ident()
        with self._lock:
            if self._inside is not None and self._inside != me:
                self.env.flop(f"{what} overlapped a signal from another thread (rule 1.3)")
            self._inside = me
            self._depth += 1
        try:
            time.sleep(0)  # let another thread show up, if one is signalling concurrently
            action()
        finally:
            with self._lock:
                self._depth -= 1
                if not self._depth:
                    self._inside = None

    def on_subscribe(self, subscription: Subscription) -> None:
        def action() -> None:
            _RawSubscriber.on_subscribe(self, subscription)
            subscription.request(1)

        self._signal("on_subscribe", action)

    def on_next(self, item: T) -> None:
        def action() -> None:
            self.budget -= 1
            if self.budget > 0:
                self.subscription.value().request(1)
            else:
                self.env.flop("more elements than requested")

        self._signal("on_next", action)

    def on_error(self, error: BaseException) -> None:
        self._signal("on_error", lambda: self._terminal(error))

    def on_complete(self) -> None:
        self._signal("on_complete", lambda: self._terminal(None))

    def _terminal(self, error: BaseException | None) -> None:
        if error is not None:
            self.env.flop(error)
        if not self.env.hand_over(self.done.close):
            self.done.close()


class _RecursionProbe(_RawSubscriber[T]):
    """Rule 3.3: counts how deep on_next → request → on_next nests."""

    def __init__(self, env: TestEnvironment, done: Latch, bound: int) -> None:
        super().__init__(env)
        self.done = done
        self.bound = bound
        self.received = 0
        self._depth = threading.local()

    def on_subscribe(self, subscription: Subscription) -> None:
        super().on_subscribe(subscription)
        subscription.request(1)

    def on_next(self, item: T) -> None:
        depth = getattr(self._depth, "value", 0) + 1
        self._depth.value = depth
        try:
            if depth > self.bound:
                self.env.flop(
                    f"on_next → request → on_next nested {depth} deep, more than the bound "
                    f"{self.bound} (rule 3.3)"
                )
                self._close()
                return
            self.received += 1
            if self.received > self.bound:
                self._close()
            else:
                self.subscription.value().request(1)
        finally:
            self._depth.value = depth - 1

    def on_error(self, error: BaseException) -> None:
        self.env.flop(error)
        self._close()

    def on_complete(self) -> None:
        self._close()

    def _close(self) -> None:
        if not self.env.hand_over(self.done.close):
            self.done.close()


class _NestingProbe(_RawSubscriber[T]):
    """No signal may start while another one to the same subscriber is on the stack."""

    def __init__(self, env: TestEnvironment, done: Latch) -> None:
        super().__init__(env)
        self.done = done
        self._depth = 0

    def _enter(self, what: str) -> None:
        self._depth += 1
        if self._depth > 1:
            self.env.flop(f"{what} was called while another signal was running (rule 1.3)")

    def on_subscribe(self, subscription: Subscription) -> None:
        self._enter("on_subscribe")
        try:
            super().on_subscribe(subscription)
            subscription.request(1)
        finally:
            self._depth -= 1

    def on_next(self, item: T) -> None:
        self._enter("on_next")
        try:
            self.subscription.value().request(1)
        finally:
            self._depth -= 1

    def on_error(self, error: BaseException) -> None:
        self._enter("on_error")
        self._depth -= 1
        self.env.flop(error)
        self.done.close()

    def on_complete(self) -> None:
        self._enter("on_complete")
        self._depth -= 1
        self.done.close()


class _OverflowingRequester(BlackholeSubscriber[T]):
    """Rule 3.17: asks for ``MAX_DEMAND - 1`` more from on_next, ten times, then cancels."""

    def __init__(self, env: TestEnvironment) -> None:
        super().__init__(env)
        self.calls = 0

    def on_next(self, item: T) -> None:
        self.calls += 1
        if self.calls <= 10:
            self.request(MAX_DEMAND - 1)
        elif self.calls == 11:
            self.cancel()


class _CancelOnLast(ManualSubscriber[T]):
    def __init__(self, env: TestEnvironment, last: int) -> None:
        super().__init__(env)
        self.last = last
        self.count = 0

    def _element(self, item: T) -> None:
        super()._element(item)
        self.count += 1
        if self.count == self.last:
            self.cancel()


class _RaisingOnNext(ManualSubscriber[T]):
    def __init__(self, env: TestEnvironment) -> None:
        super().__init__(env)
        self.failure = RuntimeError("TCK: on_next raised on purpose")

    def _element(self, item: T) -> None:
        super()._element(item)
        raise self.failure


class _YieldProbe(BlackholeSubscriber[T]):
    """Counts elements under unbounded demand; the loop must get a turn before
    `YIELD_CHECK_ELEMENTS` of them."""

    def __init__(self, env: TestEnvironment) -> None:
        super().__init__(env)
        self.count = 0
        self.ticked = False
        self.done = Latch(env)

    def tick(self) -> None:
        self.ticked = True

    def _element(self, item: T) -> None:
        if self.done.is_closed:  # (elements may follow a cancel)
            return
        self.count += 1
        if self.ticked or self.count == YIELD_CHECK_ELEMENTS:  # decided either way
            if not self.ticked:
                self.env.flop(
                    f"{YIELD_CHECK_ELEMENTS} elements were emitted without yielding to the event "
                    "loop (rule 3.4: request must return in a timely manner)"
                )
            self.cancel()
            self.done.close()
