"""The test kit: subscribers and tools for testing publishers and operators."""

from ._test_subscriber import TestSubscriber as TestSubscriber

__all__ = ("TestSubscriber",)
