"""The official test names of the JVM TCK (1.0.4), for counting the port's coverage.

Each Java name maps to ``test_`` + its snake_case spelling, which is the name of the Python
test method; `coverage` checks that every one exists.
"""

from __future__ import annotations

import re

__all__ = ("OFFICIAL", "coverage", "extra_checks", "python_name")

OFFICIAL: dict[str, tuple[str, ...]] = {
    "PublisherVerification": (
        "required_createPublisher1MustProduceAStreamOfExactly1Element",
        "required_createPublisher3MustProduceAStreamOfExactly3Elements",
        "required_validate_maxElementsFromPublisher",
        "required_validate_boundedDepthOfOnNextAndRequestRecursion",
        "required_spec101_subscriptionRequestMustResultInTheCorrectNumberOfProducedElements",
        "required_spec102_maySignalLessThanRequestedAndTerminateSubscription",
        "stochastic_spec103_mustSignalOnMethodsSequentially",
        "optional_spec104_mustSignalOnErrorWhenFails",
        "required_spec105_mustSignalOnCompleteWhenFiniteStreamTerminates",
        "optional_spec105_emptyStreamMustTerminateBySignallingOnComplete",
        "untested_spec106_mustConsiderSubscriptionCancelledAfterOnErrorOrOnCompleteHasBeenCalled",
        "required_spec107_mustNotEmitFurtherSignalsOnceOnCompleteHasBeenSignalled",
        "untested_spec107_mustNotEmitFurtherSignalsOnceOnErrorHasBeenSignalled",
        "untested_spec108_possiblyCanceledSubscriptionShouldNotReceiveOnErrorOrOnCompleteSignals",
        "untested_spec109_subscribeShouldNotThrowNonFatalThrowable",
        "required_spec109_subscribeThrowNPEOnNullSubscriber",
        "required_spec109_mustIssueOnSubscribeForNonNullSubscriber",
        "required_spec109_mayRejectCallsToSubscribeIfPublisherIsUnableOrUnwillingToServeThemRejectionMustTriggerOnErrorAfterOnSubscribe",
        "untested_spec110_rejectASubscriptionRequestIfTheSameSubscriberSubscribesTwice",
        "optional_spec111_maySupportMultiSubscribe",
        "optional_spec111_registeredSubscribersMustReceiveOnNextOrOnCompleteSignals",
        "optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingOneByOne",
        "optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingManyUpfront",
        "optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingManyUpfrontAndCompleteAsExpected",
        "required_spec302_mustAllowSynchronousRequestCallsFromOnNextAndOnSubscribe",
        "required_spec303_mustNotAllowUnboundedRecursion",
        "untested_spec304_requestShouldNotPerformHeavyComputations",
        "untested_spec305_cancelMustNotSynchronouslyPerformHeavyComputation",
        "required_spec306_afterSubscriptionIsCancelledRequestMustBeNops",
        "required_spec307_afterSubscriptionIsCancelledAdditionalCancelationsMustBeNops",
        "required_spec309_requestZeroMustSignalIllegalArgumentException",
        "required_spec309_requestNegativeNumberMustSignalIllegalArgumentException",
        "optional_spec309_requestNegativeNumberMaySignalIllegalArgumentExceptionWithSpecificMessage",
        "required_spec312_cancelMustMakeThePublisherToEventuallyStopSignaling",
        "required_spec313_cancelMustMakeThePublisherEventuallyDropAllReferencesToTheSubscriber",
        "required_spec317_mustSupportAPendingElementCountUpToLongMaxValue",
        "required_spec317_mustSupportACumulativePendingElementCountUpToLongMaxValue",
        "required_spec317_mustNotSignalOnErrorWhenPendingAboveLongMaxValue",
    ),
    "SubscriberWhiteboxVerification": (
        "required_exerciseWhiteboxHappyPath",
        "required_spec201_mustSignalDemandViaSubscriptionRequest",
        "untested_spec202_shouldAsynchronouslyDispatch",
        "required_spec203_mustNotCallMethodsOnSubscriptionOrPublisherInOnComplete",
        "required_spec203_mustNotCallMethodsOnSubscriptionOrPublisherInOnError",
        "untested_spec204_mustConsiderTheSubscriptionAsCancelledInAfterRecievingOnCompleteOrOnError",
        "required_spec205_mustCallSubscriptionCancelIfItAlreadyHasAnSubscriptionAndReceivesAnotherOnSubscribeSignal",
        "untested_spec206_mustCallSubscriptionCancelIfItIsNoLongerValid",
        "untested_spec207_mustEnsureAllCallsOnItsSubscriptionTakePlaceFromTheSameThreadOrTakeCareOfSynchronization",
        "required_spec208_mustBePreparedToReceiveOnNextSignalsAfterHavingCalledSubscriptionCancel",
        "required_spec209_mustBePreparedToReceiveAnOnCompleteSignalWithPrecedingRequestCall",
        "required_spec209_mustBePreparedToReceiveAnOnCompleteSignalWithoutPrecedingRequestCall",
        "required_spec210_mustBePreparedToReceiveAnOnErrorSignalWithPrecedingRequestCall",
        "required_spec210_mustBePreparedToReceiveAnOnErrorSignalWithoutPrecedingRequestCall",
        "untested_spec211_mustMakeSureThatAllCallsOnItsMethodsHappenBeforeTheProcessingOfTheRespectiveEvents",
        "untested_spec212_mustNotCallOnSubscribeMoreThanOnceBasedOnObjectEquality_specViolation",
        "untested_spec213_failingOnSignalInvocation",
        "required_spec213_onSubscribe_mustThrowNullPointerExceptionWhenParametersAreNull",
        "required_spec213_onNext_mustThrowNullPointerExceptionWhenParametersAreNull",
        "required_spec213_onError_mustThrowNullPointerExceptionWhenParametersAreNull",
        "untested_spec301_mustNotBeCalledOutsideSubscriberContext",
        "required_spec308_requestMustRegisterGivenNumberElementsToBeProduced",
        "untested_spec310_requestMaySynchronouslyCallOnNextOnSubscriber",
        "untested_spec311_requestMaySynchronouslyCallOnCompleteOrOnError",
        "untested_spec314_cancelMayCauseThePublisherToShutdownIfNoOtherSubscriptionExists",
        "untested_spec315_cancelMustNotThrowExceptionAndMustSignalOnError",
        "untested_spec316_requestMustNotThrowExceptionAndMustOnErrorTheSubscriber",
    ),
    "SubscriberBlackboxVerification": (
        "required_spec201_blackbox_mustSignalDemandViaSubscriptionRequest",
        "untested_spec202_blackbox_shouldAsynchronouslyDispatch",
        "required_spec203_blackbox_mustNotCallMethodsOnSubscriptionOrPublisherInOnComplete",
        "required_spec203_blackbox_mustNotCallMethodsOnSubscriptionOrPublisherInOnError",
        "untested_spec204_blackbox_mustConsiderTheSubscriptionAsCancelledInAfterRecievingOnCompleteOrOnError",
        "required_spec205_blackbox_mustCallSubscriptionCancelIfItAlreadyHasAnSubscriptionAndReceivesAnotherOnSubscribeSignal",
        "untested_spec206_blackbox_mustCallSubscriptionCancelIfItIsNoLongerValid",
        "untested_spec207_blackbox_mustEnsureAllCallsOnItsSubscriptionTakePlaceFromTheSameThreadOrTakeCareOfSynchronization",
        "untested_spec208_blackbox_mustBePreparedToReceiveOnNextSignalsAfterHavingCalledSubscriptionCancel",
        "required_spec209_blackbox_mustBePreparedToReceiveAnOnCompleteSignalWithPrecedingRequestCall",
        "required_spec209_blackbox_mustBePreparedToReceiveAnOnCompleteSignalWithoutPrecedingRequestCall",
        "required_spec210_blackbox_mustBePreparedToReceiveAnOnErrorSignalWithPrecedingRequestCall",
        "required_spec210_blackbox_mustBePreparedToReceiveAnOnErrorSignalWithoutPrecedingRequestCall",
        "untested_spec211_blackbox_mustMakeSureThatAllCallsOnItsMethodsHappenBeforeTheProcessingOfTheRespectiveEvents",
        "untested_spec212_blackbox_mustNotCallOnSubscribeMoreThanOnceBasedOnObjectEquality",
        "untested_spec213_blackbox_failingOnSignalInvocation",
        "required_spec213_blackbox_onSubscribe_mustThrowNullPointerExceptionWhenParametersAreNull",
        "required_spec213_blackbox_onNext_mustThrowNullPointerExceptionWhenParametersAreNull",
        "required_spec213_blackbox_onError_mustThrowNullPointerExceptionWhenParametersAreNull",
        "untested_spec301_blackbox_mustNotBeCalledOutsideSubscriberContext",
        "untested_spec308_blackbox_requestMustRegisterGivenNumberElementsToBeProduced",
        "untested_spec310_blackbox_requestMaySynchronouslyCallOnNextOnSubscriber",
        "untested_spec311_blackbox_requestMaySynchronouslyCallOnCompleteOrOnError",
        "untested_spec314_blackbox_cancelMayCauseThePublisherToShutdownIfNoOtherSubscriptionExists",
        "untested_spec315_blackbox_cancelMustNotThrowExceptionAndMustSignalOnError",
        "untested_spec316_blackbox_requestMustNotThrowExceptionAndMustOnErrorTheSubscriber",
    ),
    "IdentityProcessorVerification": (
        "required_spec104_mustCallOnErrorOnAllItsSubscribersIfItEncountersANonRecoverableError",
        "mustImmediatelyPassOnOnErrorEventsReceivedFromItsUpstreamToItsDownstream",
        "required_mustRequestFromUpstreamForElementsThatHaveBeenRequestedLongAgo",
    ),
}
"""The 94 distinct test bodies: 38 publisher, 27 whitebox, 26 blackbox, 3 processor-own."""


def python_name(java: str) -> str:
    """``required_spec109_subscribeThrowNPEOnNullSubscriber`` →
    ``test_required_spec109_subscribe_throw_npe_on_null_subscriber``."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", java)
    return "test_" + spaced.lower()


def coverage() -> tuple[int, int, list[str]]:
    """(official names present, official total, missing names) over the four verifications."""
    from . import (
        IdentityProcessorVerification,
        PublisherVerification,
        SubscriberBlackboxVerification,
        SubscriberWhiteboxVerification,
    )

    classes: dict[str, type] = {
        "PublisherVerification": PublisherVerification,
        "SubscriberWhiteboxVerification": SubscriberWhiteboxVerification,
        "SubscriberBlackboxVerification": SubscriberBlackboxVerification,
        "IdentityProcessorVerification": IdentityProcessorVerification,
    }
    missing = [
        f"{owner}.{python_name(java)}"
        for owner, names in OFFICIAL.items()
        for java in names
        if not callable(getattr(classes[owner], python_name(java), None))
    ]
    total = sum(len(names) for names in OFFICIAL.values())
    return total - len(missing), total, missing


def extra_checks() -> list[str]:
    """The distinct ``test_extra_…`` checks of the four verifications."""
    from . import (
        IdentityProcessorVerification,
        PublisherVerification,
        SubscriberBlackboxVerification,
        SubscriberWhiteboxVerification,
    )

    names: set[str] = set()
    for cls in (
        PublisherVerification,
        SubscriberWhiteboxVerification,
        SubscriberBlackboxVerification,
        IdentityProcessorVerification,
    ):
        names.update(n for n in dir(cls) if n.startswith("test_extra_"))
    return sorted(names)
