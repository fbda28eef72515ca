"""The test kit: subscribers and tools for testing publishers and operators."""

from .._core import ProtocolChecker as ProtocolChecker, Violation as Violation
from ._checker import checked as checked, debug_violations as debug_violations
from ._test_subscriber import TestSubscriber as TestSubscriber

__all__ = ("ProtocolChecker", "TestSubscriber", "Violation", "checked", "debug_violations")
