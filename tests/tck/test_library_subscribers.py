"""The TCK's subscriber verifications, whitebox and blackbox, over every subscriber the library
hands to a publisher it did not create (``cases_subscribers.SUBSCRIBERS``).

The blackbox verification gets that subscriber as is. The whitebox one puts the TCK's
`ReportingSubscriber` in front of it, as the JVM projects do for their own subscribers: it
passes every signal on and tells the probe, and its puppet requests and cancels on the
subscription the subscriber was given. Runs on the asyncio loop only (see conftest.py), with the library run's timeouts.
"""

from __future__ import annotations

import inspect
from typing import Any

import reactive_aio
from reactive_aio import Flux, Processor, Subscriber
from reactive_aio.tck import (
    ReportingSubscriber,
    SubscriberBlackboxVerification,
    SubscriberWhiteboxVerification,
    TestEnvironment,
    WhiteboxSubscriberProbe,
)

from .cases_subscribers import SUBSCRIBERS, Capture, SubscriberCase
from .test_library import _library_env


class _Cases:
    """Creates the subscriber under test and keeps its handle alive for the test."""

    case_name = ""

    def _subscribe(self) -> tuple[Subscriber[int], object, SubscriberCase]:
        case = SUBSCRIBERS[self.case_name]()
        capture = Capture()
        handle = case.start(capture)
        assert capture.subscriber is not None, f"{self.case_name} did not subscribe"
        kept: list[object] = self.__dict__.setdefault("_kept", [])
        kept.append(handle)  # an iterator handle cancels its subscription when dropped
        return capture.subscriber, handle, case


def _whitebox(name: str) -> type[Any]:
    class Case(_Cases, SubscriberWhiteboxVerification[int]):
        case_name = name

        def create_env(self) -> TestEnvironment:
            return _library_env()

        def create_subscriber(self, probe: WhiteboxSubscriberProbe[int]) -> Subscriber[int]:
            return ReportingSubscriber(probe, self._subscribe()[0])

        def create_element(self, element: int) -> int:
            return element

    Case.__name__ = Case.__qualname__ = f"TestWhitebox_{name}"
    return Case


def _blackbox(name: str) -> type[Any]:
    class Case(_Cases, SubscriberBlackboxVerification[int]):
        case_name = name
        _handles: dict[int, tuple[object, SubscriberCase]]

        def create_env(self) -> TestEnvironment:
            return _library_env()

        def create_subscriber(self) -> Subscriber[int]:
            subscriber, handle, case = self._subscribe()
            self.__dict__.setdefault("_handles", {})[id(subscriber)] = (handle, case)
            return subscriber

        def trigger_request(self, subscriber: Subscriber[int]) -> None:
            handle, case = self._handles[id(subscriber)]
            case.trigger_request(handle)

        def create_element(self, element: int) -> int:
            return element

    Case.__name__ = Case.__qualname__ = f"TestBlackbox_{name}"
    return Case


for _name in SUBSCRIBERS:
    globals()[f"TestWhitebox_{_name}"] = _whitebox(_name)
    globals()[f"TestBlackbox_{_name}"] = _blackbox(_name)


# -- every consumer has a case ---------------------------------------------------------------

OTHER_CONSUMERS = {
    "to_async_iterator",
    "SubmissionPublisher.consume",
    "adapters.pull",
}
"""Consumers outside `Flux`'s methods (the web sinks all consume through ``adapters.pull``)."""

NOT_CONSUMERS = {"sync_iterator", "sync_inner", "fused_chain"}
"""`Flux` methods that return something else without subscribing anything (the iterator of a
source whose items are at hand, that iterator as a drain's inner, or the fused chain a flux
is)."""


def public_consumers() -> set[str]:
    """`Flux` methods that subscribe a consumer, the exported processors, and the others."""
    names = set(OTHER_CONSUMERS)
    for name, member in vars(Flux).items():
        if name.startswith("_") and name != "__aiter__":
            continue
        if name in NOT_CONSUMERS or not inspect.isfunction(member):
            continue
        returns = inspect.signature(member).return_annotation
        if isinstance(returns, str) and not returns.startswith(("Flux", "ConnectableFlux")):
            names.add(name)
    for name in reactive_aio.__all__:
        obj = getattr(reactive_aio, name)
        if inspect.isclass(obj) and name.endswith("Processor") and obj is not Processor:
            names.add(name)
    return names


def test_every_consumer_has_a_subscriber_case() -> None:
    missing = public_consumers() - set(SUBSCRIBERS)
    assert not missing, f"consumers without a case in tests/tck/cases_subscribers.py: {missing}"
    assert {"to_list", "subscribe", "__aiter__", "MulticastProcessor"} <= public_consumers()
