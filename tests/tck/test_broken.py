"""The kit proves itself: each deliberately broken component fails exactly the tests of the
rules it breaks and passes the rest."""

from __future__ import annotations

import pytest

from reactive_aio import Flux, Publisher, Subscriber
from reactive_aio.tck import (
    PublisherVerification,
    SubscriberBlackboxVerification,
    SubscriberWhiteboxVerification,
    WhiteboxSubscriberProbe,
)
from reactive_aio.tck._base import Verification
from reactive_aio.tck._runner import run_verification

from .broken.publishers import Flaw, FlawedPublisher
from .broken.subscribers import AcceptsNone, KeepsSecondSubscription

P = "test_required_"

PUBLISHER_FAILURES: dict[Flaw, set[str]] = {
    "none": set(),
    # More elements than requested: rule 1.1, and the cancel tests see the surplus.
    "ignores_demand": {
        P + "spec101_subscription_request_must_result_in_the_correct_number_of_produced_elements",
        P + "spec312_cancel_must_make_the_publisher_to_eventually_stop_signaling",
        "test_extra_spec305_cancel_from_another_thread_must_stop_the_publisher",
    },
    # on_next → request → on_next on one stack: rule 3.3, nesting (1.3) and never yielding.
    "no_trampoline": {
        P + "spec303_must_not_allow_unbounded_recursion",
        "test_extra_spec103_signals_must_never_nest",
        "test_extra_spec304_unbounded_demand_must_yield_to_the_event_loop",
    },
    # A registry that never forgets its subscribers: rule 3.13 (and 1.6 after on_complete).
    "keeps_subscriber": {
        P
        + "spec313_cancel_must_make_the_publisher_eventually_drop_all_references_to_the_subscriber",
        "test_extra_spec313_cancel_must_drop_the_subscriber_while_the_subscription_is_held",
        "test_extra_spec106_must_drop_the_subscriber_after_on_complete",
    },
    # request(0) raises instead of signalling on_error: rule 3.9.
    "throws_on_bad_request": {
        P + "spec309_request_zero_must_signal_illegal_argument_exception",
        P + "spec309_request_negative_number_must_signal_illegal_argument_exception",
        "test_extra_spec309_request_zero_must_cancel_the_subscription",
    },
    # Every request after on_complete emits again: rule 1.7 wherever a test requests late,
    # and its subscription keeps the subscriber (1.6 and 3.13 with the subscription held).
    "emits_after_completion": {
        "test_extra_spec106_must_drop_the_subscriber_after_on_complete",
        P + "create_publisher1_must_produce_a_stream_of_exactly1_element",
        P + "create_publisher3_must_produce_a_stream_of_exactly3_elements",
        P + "spec105_must_signal_on_complete_when_finite_stream_terminates",
        P + "spec107_must_not_emit_further_signals_once_on_complete_has_been_signalled",
        P + "spec317_must_support_a_cumulative_pending_element_count_up_to_long_max_value",
        "test_extra_spec315_cancel_and_request_must_return_normally_after_termination",
    },
}


def _publisher_verification(flaw: Flaw) -> type[Verification]:
    class Flawed(PublisherVerification[int]):
        def create_publisher(self, elements: int) -> Publisher[int]:
            return FlawedPublisher(elements, flaw)

        def create_failed_publisher(self) -> Publisher[int] | None:
            return Flux.error(RuntimeError("failed publisher"))

    return Flawed


@pytest.mark.parametrize("flaw", sorted(PUBLISHER_FAILURES))
async def test_flawed_publisher_fails_exactly_its_rules(flaw: Flaw) -> None:
    outcomes = await run_verification(_publisher_verification(flaw))
    failed = {o.name for o in outcomes if o.status == "failed"}
    assert failed == PUBLISHER_FAILURES[flaw], [
        (o.name, o.message) for o in outcomes if o.status == "failed"
    ]
    assert sum(o.status == "passed" for o in outcomes) >= 25


async def test_signals_from_two_threads_fail_the_stochastic_rule_103() -> None:
    name = "test_stochastic_spec103_must_signal_on_methods_sequentially"
    (outcome,) = await run_verification(_publisher_verification("two_threads"), [name])
    assert outcome.status == "failed"
    assert "rule 1.3" in outcome.message


SUBSCRIBER_FAILURES = {
    "keeps_second_subscription": {
        "spec205_must_call_subscription_cancel_if_it_already_has_an_subscription_and_receives_another_on_subscribe_signal"
    },
    "accepts_none": {
        "spec213_on_subscribe_must_throw_null_pointer_exception_when_parameters_are_null",
        "spec213_on_next_must_throw_null_pointer_exception_when_parameters_are_null",
        "spec213_on_error_must_throw_null_pointer_exception_when_parameters_are_null",
    },
}


def _make(kind: str, probe: WhiteboxSubscriberProbe[int] | None) -> Subscriber[int]:
    if kind == "accepts_none":
        return AcceptsNone(probe)
    return KeepsSecondSubscription(probe)


@pytest.mark.parametrize("kind", sorted(SUBSCRIBER_FAILURES))
async def test_flawed_whitebox_subscriber_fails_exactly_its_rules(kind: str) -> None:
    class Flawed(SubscriberWhiteboxVerification[int]):
        def create_subscriber(self, probe: WhiteboxSubscriberProbe[int]) -> Subscriber[int]:
            return _make(kind, probe)

        def create_element(self, element: int) -> int:
            return element

    outcomes = await run_verification(Flawed)
    failed = {o.name for o in outcomes if o.status == "failed"}
    assert failed == {P + name for name in SUBSCRIBER_FAILURES[kind]}, failed


@pytest.mark.parametrize("kind", sorted(SUBSCRIBER_FAILURES))
async def test_flawed_blackbox_subscriber_fails_exactly_its_rules(kind: str) -> None:
    class Flawed(SubscriberBlackboxVerification[int]):
        def create_subscriber(self) -> Subscriber[int]:
            return _make(kind, None)

        def create_element(self, element: int) -> int:
            return element

    outcomes = await run_verification(Flawed)
    failed = {o.name for o in outcomes if o.status == "failed"}
    expected = {P + name.replace("_", "_blackbox_", 1) for name in SUBSCRIBER_FAILURES[kind]}
    assert failed == expected, failed
