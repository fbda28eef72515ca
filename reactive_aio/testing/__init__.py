"""The test kit: subscribers, publishers, a scripted verifier, virtual time and marbles."""

from ._marbles import (
    Recording as Recording,
    cold as cold,
    expect_marbles as expect_marbles,
    parse_marbles as parse_marbles,
    record as record,
    render_marbles as render_marbles,
)
from ._step_verifier import StepVerifier as StepVerifier
from ._test_publisher import TestPublisher as TestPublisher, Violation as Violation
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
    "Recording",
    "StepVerifier",
    "TestPublisher",
    "TestSubscriber",
    "Violation",
    "VirtualTimeLoop",
    "advance",
    "cold",
    "expect_marbles",
    "parse_marbles",
    "record",
    "render_marbles",
    "run_virtual",
    "virtual_loop_factories",
    "virtual_time",
)
