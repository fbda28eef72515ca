"""reactive_aio.tck: the Reactive Streams TCK for Python, as a pytest plugin.

Subclass a verification under a ``Test…`` name, supply its factories and run pytest::

    class TestRange(PublisherVerification[int]):
        def create_publisher(self, elements: int) -> Publisher[int]:
            return Flux.range(0, elements)

See ``docs/guides/tck.md``.
"""

from ._env import TestEnvironment as TestEnvironment
from ._helpers import (
    BlackboxProbe as BlackboxProbe,
    HelperPublisher as HelperPublisher,
    ManualPublisher as ManualPublisher,
    ManualSubscriber as ManualSubscriber,
    ReportingSubscriber as ReportingSubscriber,
    SubscriberPuppet as SubscriberPuppet,
    SubscriptionPuppet as SubscriptionPuppet,
    TckTestError as TckTestError,
    WhiteboxSubscriberProbe as WhiteboxSubscriberProbe,
)
from ._processor import IdentityProcessorVerification as IdentityProcessorVerification
from ._publisher import PublisherVerification as PublisherVerification
from ._subscriber_blackbox import (
    SubscriberBlackboxVerification as SubscriberBlackboxVerification,
)
from ._subscriber_whitebox import (
    SubscriberWhiteboxVerification as SubscriberWhiteboxVerification,
)

__all__ = (
    "BlackboxProbe",
    "HelperPublisher",
    "IdentityProcessorVerification",
    "ManualPublisher",
    "ManualSubscriber",
    "PublisherVerification",
    "ReportingSubscriber",
    "SubscriberBlackboxVerification",
    "SubscriberPuppet",
    "SubscriberWhiteboxVerification",
    "SubscriptionPuppet",
    "TckTestError",
    "TestEnvironment",
    "WhiteboxSubscriberProbe",
)
