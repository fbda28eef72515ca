"""The TCK's verifications against this branch's processors and publishers."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from reactive_aio import Processor, Publisher
from reactive_aio.tck import IdentityProcessorVerification, PublisherVerification

from ..tck.cases_ops_boundary import CASES, COORDINATED, FAILED, PROCESSORS, SINGLE_SUBSCRIBER


def _publisher_verification(name: str) -> type[PublisherVerification[int]]:
    make = CASES[name]
    failed = FAILED.get(name)

    class Verification(PublisherVerification[int]):
        def create_publisher(self, elements: int) -> Publisher[int]:
            return make(elements)

        def create_failed_publisher(self) -> Publisher[int] | None:
            return failed() if failed is not None else None

    Verification.__name__ = Verification.__qualname__ = f"Test_{name}"
    return Verification


def _processor_verification(name: str) -> type[IdentityProcessorVerification[int]]:
    make: Callable[[int], Processor[int, int]] = PROCESSORS[name]

    class Verification(IdentityProcessorVerification[int]):
        def create_identity_processor(self, buffer_size: int) -> Processor[int, int]:
            return make(buffer_size)

        def create_element(self, element: int) -> int:
            return element

        def max_supported_subscribers(self) -> int:
            return 1 if name in SINGLE_SUBSCRIBER else super().max_supported_subscribers()

        def does_coordinated_emission(self) -> bool:
            return name in COORDINATED

    Verification.__name__ = Verification.__qualname__ = f"Test_{name}"
    return Verification


for _name in CASES:
    globals()[f"TestPublisher_{_name}"] = _publisher_verification(_name)
for _name in PROCESSORS:
    globals()[f"TestProcessor_{_name}"] = _processor_verification(_name)

del pytest
