"""The TCK's identity-processor verification for single-subscriber processors.

The library verification (tests/tck/test_library.py) runs ``CASES`` and ``PROCESSORS``; the
processors that take exactly one subscriber are verified here, with
``max_supported_subscribers() == 1``.
"""

from __future__ import annotations

from collections.abc import Callable

from reactive_aio import Processor
from reactive_aio.tck import IdentityProcessorVerification

from ..tck.cases_ops_boundary import SINGLE_SUBSCRIBER_PROCESSORS


def _verification(name: str) -> type[IdentityProcessorVerification[int]]:
    make: Callable[[int], Processor[int, int]] = SINGLE_SUBSCRIBER_PROCESSORS[name]

    class Verification(IdentityProcessorVerification[int]):
        def create_identity_processor(self, buffer_size: int) -> Processor[int, int]:
            return make(buffer_size)

        def create_element(self, element: int) -> int:
            return element

        def max_supported_subscribers(self) -> int:
            return 1

    Verification.__name__ = Verification.__qualname__ = f"TestProcessor_{name}"
    return Verification


for _name in SINGLE_SUBSCRIBER_PROCESSORS:
    globals()[f"TestProcessor_{_name}"] = _verification(_name)
