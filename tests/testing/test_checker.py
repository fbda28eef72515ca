"""The protocol checker catches each broken stage of a catalogue, and nothing in the library."""

from __future__ import annotations

import asyncio
import importlib
import pkgutil
import threading
from collections.abc import Callable

import pytest

import tests.tck
from reactive_aio import Flux, Publisher, Subscriber, Subscription
from reactive_aio.testing import ProtocolChecker, TestSubscriber, checked


class _Stub:
    """A subscription that records nothing and lets a broken publisher be driven by hand."""

    def __init__(self, on_request: Callable[[int], None] | None = None) -> None:
        self._on_request = on_request

    def request(self, n: int) -> None:
        if self._on_request is not None:
            self._on_request(n)

    def cancel(self) -> None:
        pass


class OverEmitting:
    """Ignores demand: emits twice what was requested (breaks rule 1.1)."""

    def subscribe(self, subscriber: Subscriber[int]) -> None:
        def request(n: int) -> None:
            for i in range(2 * n):
                subscriber.on_next(i)

        subscriber.on_subscribe(_Stub(request))


class AfterComplete:
    """Emits after on_complete (breaks rule 1.7)."""

    def subscribe(self, subscriber: Subscriber[int]) -> None:
        def request(n: int) -> None:
            subscriber.on_complete()
            subscriber.on_next(1)

        subscriber.on_subscribe(_Stub(request))


class NoOnSubscribe:
    """Signals on_next first (breaks rule 1.9)."""

    def subscribe(self, subscriber: Subscriber[int]) -> None:
        subscriber.on_next(1)


class TwiceSubscribed:
    """Signals on_subscribe twice (breaks rule 2.12)."""

    def subscribe(self, subscriber: Subscriber[int]) -> None:
        subscriber.on_subscribe(_Stub())
        subscriber.on_subscribe(_Stub())


class NoneItem:
    """Emits None (breaks rule 2.13)."""

    def subscribe(self, subscriber: Subscriber[int | None]) -> None:
        subscriber.on_subscribe(_Stub(lambda n: subscriber.on_next(None)))


class Recursive:
    """Emits on the requester's stack with no trampoline (breaks rule 1.3 / 3.3)."""

    def subscribe(self, subscriber: Subscriber[int]) -> None:
        count = [0]

        def request(n: int) -> None:
            if count[0] < 3:
                count[0] += 1
                subscriber.on_next(count[0])

        subscriber.on_subscribe(_Stub(request))


def _run(publisher: Publisher[int]) -> ProtocolChecker:
    checker = ProtocolChecker(report=False)
    ts = TestSubscriber[int]()
    try:
        checked(publisher, checker=checker).subscribe(ts)
        if ts.subscription is not None:
            ts.request(5)
    except TypeError:
        pass  # the subscriber rightly refuses None (rule 2.13); the broken stage doesn't cope
    return checker


@pytest.mark.parametrize(
    ("publisher", "rule"),
    [
        (OverEmitting(), {"1.1"}),
        (AfterComplete(), {"1.7"}),
        (NoOnSubscribe(), {"1.9", "1.1"}),  # nothing was requested either
        (TwiceSubscribed(), {"2.12"}),
        (NoneItem(), {"2.13"}),
    ],
    ids=lambda v: "-".join(sorted(v)) if isinstance(v, set) else type(v).__name__,
)
def test_each_broken_stage_is_caught_with_its_rule(
    publisher: Publisher[int], rule: set[str]
) -> None:
    checker = _run(publisher)
    assert checker.violations, f"{type(publisher).__name__} went unnoticed"
    assert {v.rule for v in checker.violations} == rule
    assert "test_checker.py" in checker.violations[0].stage  # where it was assembled


def test_recursion_without_trampoline_is_overlapping_signals() -> None:
    checker = ProtocolChecker(report=False)
    ts = TestSubscriber[int](initial_request=1)
    ts.on_next_callback = lambda _: ts.request(1)
    checked(Recursive(), checker=checker).subscribe(ts)
    assert {v.rule for v in checker.violations} == {"1.3"}


def test_signals_from_two_threads_at_once_are_caught() -> None:
    checker = ProtocolChecker(report=False)
    inside = threading.Event()
    release = threading.Event()

    def block_first(item: int) -> None:
        if item == 1:
            inside.set()
            release.wait(5)

    ts = TestSubscriber[int](initial_request=10, on_next_callback=block_first)
    holder: list[Subscriber[int]] = []

    class TwoThreads:
        def subscribe(self, subscriber: Subscriber[int]) -> None:
            holder.append(subscriber)
            subscriber.on_subscribe(_Stub())

    checked(TwoThreads(), checker=checker).subscribe(ts)
    first = threading.Thread(target=holder[0].on_next, args=(1,))
    first.start()
    assert inside.wait(5)
    holder[0].on_next(2)  # while thread one is still inside on_next
    release.set()
    first.join(5)
    assert [v.rule for v in checker.violations] == ["1.3"]
    assert "another thread" in checker.violations[0].message


def test_calling_back_from_on_complete_is_caught() -> None:
    checker = ProtocolChecker(report=False)

    class CallsBack:
        subscription: Subscription | None = None

        def on_subscribe(self, subscription: Subscription) -> None:
            self.subscription = subscription
            subscription.request(5)

        def on_next(self, item: int) -> None:
            pass

        def on_error(self, error: BaseException) -> None:
            pass

        def on_complete(self) -> None:
            assert self.subscription is not None
            self.subscription.request(1)

    checked(Flux.just(1), checker=checker).subscribe(CallsBack())
    assert [v.rule for v in checker.violations] == ["2.3"]


def _library_cases() -> dict[str, Callable[[int], Publisher[int]]]:
    cases: dict[str, Callable[[int], Publisher[int]]] = {}
    for info in pkgutil.iter_modules(tests.tck.__path__):
        if info.name.startswith("cases_"):
            module = importlib.import_module(f"tests.tck.{info.name}")
            limits = getattr(module, "LIMITS", {})  # cases that cannot make 20 items
            for name, make in getattr(module, "CASES", {}).items():
                if limits.get(name, 20) >= 20:
                    cases[f"{info.name}:{name}"] = make
    return cases


@pytest.mark.parametrize("make", _library_cases().values(), ids=_library_cases().keys())
async def test_library_publishers_break_no_rule(make: Callable[[int], Publisher[int]]) -> None:
    checker = ProtocolChecker(report=False)
    eager = TestSubscriber[int](initial_request=1000)
    checked(make(20), checker=checker).subscribe(eager)
    stepwise = TestSubscriber[int](initial_request=1)
    stepwise.on_next_callback = lambda _: stepwise.request(1)
    checked(make(20), checker=checker).subscribe(stepwise)
    cancelling = TestSubscriber[int](initial_request=3)
    cancelling.on_next_callback = lambda _: cancelling.cancel()
    checked(make(20), checker=checker).subscribe(cancelling)
    await eager.wait_terminated()
    await stepwise.wait_terminated()
    for _ in range(10):
        await asyncio.sleep(0)
    checker.assert_clean()
    assert len(eager.values) == 20
    assert len(stepwise.values) == 20


def test_debug_mode_checks_every_stage_and_names_where_it_was_built() -> None:
    import os
    import subprocess
    import sys

    script = """
import asyncio
from reactive_aio import Flux
from reactive_aio.testing import debug_violations

class Broken:  # emits before on_subscribe
    def subscribe(self, subscriber):
        subscriber.on_next(1)

async def main():
    assert await Flux.range(0, 100).map(lambda x: x + 1).filter(bool).take(50).to_list()
    assert debug_violations() == [], debug_violations()
    Flux.from_publisher(Broken()).map(str).subscribe(on_next=print)
    print(sorted({v.rule for v in debug_violations()}), debug_violations()[0].stage)

asyncio.run(main())
"""
    env = {**os.environ, "REACTIVE_AIO_DEBUG": "1"}
    result = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith("['1.1', '1.9']"), last
    assert "<string>:13" in last  # the line that assembled the broken stage
