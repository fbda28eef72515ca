"""The test kit: subscribers, publishers, a scripted verifier, a protocol checker, virtual
time and marbles."""

from .._core import ProtocolChecker as ProtocolChecker, Violation as Violation
from ._checker import checked as checked, debug_violations as debug_violations
from ._marbles import (
    Recording as Recording,
    cold as cold,
    expect_marbles as expect_marbles,
    parse_marbles as parse_marbles,
    record as record,
    render_marbles as render_marbles,
)
from ._step_verifier import StepVerifier as StepVerifier
from ._test_publisher import Misbehavior as Misbehavior, TestPublisher as TestPublisher
from ._test_subscriber import TestSubscriber as TestSubscriber
from ._virtual_time import (
    VirtualTimeLoop as VirtualTimeLoop,
    advance as advance,
    run_virtual as run_virtual,
    virtual_loop_factories as virtual_loop_factories,
)

try:
    from ._pytest import virtual_time as virtual_time
except ImportError:  # pragma: no cover - pytest is only needed for the fixture
    pass

__all__ = (
    "Misbehavior",
    "ProtocolChecker",
    "Recording",
    "StepVerifier",
    "TestPublisher",
    "TestSubscriber",
    "Violation",
    "VirtualTimeLoop",
    "advance",
    "checked",
    "cold",
    "debug_violations",
    "expect_marbles",
    "parse_marbles",
    "record",
    "render_marbles",
    "run_virtual",
    "virtual_loop_factories",
    "virtual_time",
)
