"""The verifications pass against correct components (and so can be trusted to fail others)."""

from __future__ import annotations

from reactive_aio import Flux, Processor, Publisher, Subscriber
from reactive_aio.tck import (
    IdentityProcessorVerification,
    PublisherVerification,
    SubscriberBlackboxVerification,
    SubscriberWhiteboxVerification,
    WhiteboxSubscriberProbe,
)

from .reference import LockstepProcessor, PassThroughProcessor, RequestingSubscriber


class TestRangePublisher(PublisherVerification[int]):
    def create_publisher(self, elements: int) -> Publisher[int]:
        return Flux.range(0, elements)

    def create_failed_publisher(self) -> Publisher[int] | None:
        return Flux.error(RuntimeError("failed publisher"))


class TestWhiteboxSubscriber(SubscriberWhiteboxVerification[int]):
    def create_subscriber(self, probe: WhiteboxSubscriberProbe[int]) -> Subscriber[int]:
        return RequestingSubscriber(probe)

    def create_element(self, element: int) -> int:
        return element


class TestBlackboxSubscriber(SubscriberBlackboxVerification[int]):
    def create_subscriber(self) -> Subscriber[int]:
        return RequestingSubscriber()

    def create_element(self, element: int) -> int:
        return element


class TestPassThroughProcessor(IdentityProcessorVerification[int]):
    def create_identity_processor(self, buffer_size: int) -> Processor[int, int]:
        return PassThroughProcessor()

    def create_element(self, element: int) -> int:
        return element

    def max_supported_subscribers(self) -> int:
        return 1


class TestLockstepProcessor(IdentityProcessorVerification[int]):
    def create_identity_processor(self, buffer_size: int) -> Processor[int, int]:
        return LockstepProcessor(buffer_size)

    def create_element(self, element: int) -> int:
        return element

    def does_coordinated_emission(self) -> bool:
        return True
