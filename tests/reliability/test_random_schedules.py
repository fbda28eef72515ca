"""Randomized schedules: random chains, request sizes, cancels, upstream errors and
foreign-thread requests, compared with the reference model under the protocol checker.

Sources are synchronous, asynchronous, deferred, or a publisher of another library that
signals from its own thread (``thread``): whatever thread signals, the chain and the final
subscriber must only ever run inside the loop. A ``sparse`` source hides its items among long
runs that a fused filter drops (the drain must yield mid-run and lose nothing), a
``hinting`` one behind an iterator whose length hint says nothing is left.

CI runs a fixed seed and a modest example count. For a long run::

    REACTIVE_AIO_HYPOTHESIS_EXAMPLES=10000 .venv/bin/python -m pytest tests/reliability -q
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, event, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from reactive_aio import Flux
from reactive_aio.testing import ProtocolChecker, TestSubscriber, checked

from ..thread_publisher import ThreadPublisher
from .model import LONG_GAP, OPERATORS, Hinting, Outcome

EXAMPLES = int(os.environ.get("REACTIVE_AIO_HYPOTHESIS_EXAMPLES", "150"))

THREAD_SETTLE_ROUNDS = 1000
"""Rounds of loop turns (and a millisecond) a thread source gets to fall quiet."""

pytestmark = pytest.mark.timeout(max(120, EXAMPLES // 4))  # long runs on a loaded machine


class UpstreamFailure(Exception):
    """The error a random source ends with."""


def _source(
    items: list[int], fail: bool, kind: str, threads: list[ThreadPublisher[int]]
) -> Flux[int]:
    def sync_items() -> Iterator[int]:
        yield from items
        if fail:
            raise UpstreamFailure("upstream failed at the end")

    async def async_items() -> AsyncIterator[int]:
        for item in items:
            yield item
        if fail:
            raise UpstreamFailure("upstream failed at the end")

    if kind == "async":
        return Flux.from_async_iterable(async_items())
    if kind == "thread":
        error = UpstreamFailure("upstream failed at the end") if fail else None
        publisher = ThreadPublisher(items, error=error)
        threads.append(publisher)
        return Flux.from_publisher(publisher)
    if kind == "defer":
        return Flux.defer(lambda: Flux.from_iterable(sync_items()))
    if kind == "sparse":  # a generator when it fails, else a list: both emit loops
        padded = (y for x in sync_items() for y in (*[-1] * (LONG_GAP - 1), x))
        return Flux.from_iterable(padded if fail else list(padded)).filter(lambda x: x >= 0)
    if kind == "hinting":
        return Flux.from_iterable(Hinting(sync_items(), 0))
    return Flux.from_iterable(sync_items())


class Schedules(RuleBasedStateMachine):
    """One random chain per run; rules drive demand, cancellation and the loop."""

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.checker = ProtocolChecker(report=False)
        self.subscriber = TestSubscriber[int]()
        self.expected: Outcome = ([], "complete")
        self.requested = 0
        self.cancelled_after: int | None = None
        self.error_may_cut = False
        self.failures: set[type[BaseException]] = set()  # the source's, a stage's
        self.threads: list[ThreadPublisher[int]] = []
        self.loop_thread = threading.get_ident()

    @initialize(
        items=st.lists(st.integers(0, 50), max_size=40),
        fail=st.booleans(),
        kind=st.sampled_from(["sync", "async", "defer", "thread", "sparse", "hinting"]),
        chain=st.lists(
            st.sampled_from(sorted(OPERATORS)).flatmap(
                lambda name: st.tuples(st.just(name), OPERATORS[name].params)
            ),
            max_size=5,
        ),
        check_source=st.booleans(),
    )
    def build(
        self,
        items: list[int],
        fail: bool,
        kind: str,
        chain: list[tuple[str, Any]],
        check_source: bool,
    ) -> None:
        event(f"source: {kind}")
        flux = _source(items, fail, kind, self.threads)
        if check_source or not chain:
            flux = checked(flux, checker=self.checker, name="source")
        else:  # the first stages may fuse into the source's emit loop; checked behind them
            event("source fused with the first stage")
        outcome: Outcome = (list(items), UpstreamFailure("x") if fail else "complete")
        ends = [outcome[1]]
        for name, param in chain:
            event(f"operator: {name}")  # --hypothesis-show-statistics lists what ran
            operator = OPERATORS[name]
            flux = checked(operator.apply(flux, param), checker=self.checker, name=name)
            outcome = operator.model(outcome, param)
            ends.append(outcome[1])
            self.error_may_cut |= operator.eager_error
        self.failures = {type(end) for end in ends if isinstance(end, BaseException)}
        self.expected = outcome

        async def subscribe() -> None:
            flux.subscribe(self.subscriber)

        self.loop.run_until_complete(subscribe())

    def _settle(self) -> None:
        async def spin() -> None:  # enough turns for every hop of a chain of 5 stages
            for _ in range(THREAD_SETTLE_ROUNDS):
                for _ in range(32):
                    await asyncio.sleep(0)
                # A source's worker thread may still be on its way with a signal: settled
                # once it waits for demand (or is done) both before and after a round of turns.
                if all(publisher.quiet() for publisher in self.threads):
                    for _ in range(32):
                        await asyncio.sleep(0)
                    if all(publisher.quiet() for publisher in self.threads):
                        return
                await asyncio.sleep(0.001)
            raise AssertionError("a source's thread kept signalling: the chain never settled")

        self.loop.run_until_complete(spin())

    @rule(n=st.integers(1, 12))
    def request(self, n: int) -> None:
        self.requested += n

        async def from_the_loop() -> None:  # as a task of the owning loop would
            self.subscriber.request(n)

        self.loop.run_until_complete(from_the_loop())
        self._settle()

    @rule(n=st.integers(1, 12))
    def request_between_loop_runs(self, n: int) -> None:
        self.requested += n
        self.subscriber.request(n)  # the owning thread, but outside the running loop
        self._settle()

    @rule(n=st.integers(1, 12))
    def request_from_another_thread(self, n: int) -> None:
        self.requested += n
        thread = threading.Thread(target=self.subscriber.request, args=(n,))
        thread.start()
        thread.join()
        self._settle()

    @precondition(lambda self: self.cancelled_after is None)
    @rule()
    def cancel(self) -> None:
        async def from_the_loop() -> None:
            # counted as the cancel runs: callbacks queued before it may still deliver
            self.cancelled_after = len(self.subscriber.values)
            self.subscriber.cancel()

        self.loop.run_until_complete(from_the_loop())
        self._settle()

    @invariant()
    def agrees_with_the_model(self) -> None:
        items, end = self.expected
        got = self.subscriber.values
        assert len(got) <= self.requested, "more items than requested (rule 1.1)"
        assert got == items[: len(got)], f"{got} is not a prefix of the model's {items}"
        if self.cancelled_after is not None:
            assert len(got) == self.cancelled_after, "items after cancel"
        if self.subscriber.terminated:
            # An eager error may overtake items in flight, even ones that would have ended the
            # stream further down (take_while): then any prefix ends with an error that one of
            # the stages before would have signalled (the source's, or a function's).
            errors = self.subscriber.errors
            cut = self.error_may_cut and bool(self.failures) and bool(errors)
            assert cut or got == items, f"terminated after {got}, model says {items}"
            if cut:
                assert type(errors[0]) in self.failures, f"{errors[0]!r} ends the stream"
            elif isinstance(end, BaseException):
                self.subscriber.assert_error(type(end))
            else:
                self.subscriber.assert_complete()
            if errors and type(errors[0]) is RuntimeError:  # from StopIteration, as PEP 479
                assert type(errors[0].__cause__) in (StopIteration, StopAsyncIteration)
        elif (
            self.cancelled_after is None and len(got) == len(items) and self.requested > len(items)
        ):
            self._settle()
            assert self.subscriber.terminated, (
                "all items delivered and demand left, but no terminal signal"
            )
        self.checker.assert_clean()
        assert self.subscriber.threads <= {self.loop_thread}, (
            "a signal reached the subscriber outside the loop's thread"
        )

    def teardown(self) -> None:
        if self.subscriber.subscription is not None and not self.subscriber.terminated:
            self.subscriber.cancel()
        self._settle()
        self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        self.loop.close()
        for publisher in self.threads:
            publisher.join(5.0)
            assert publisher.quiet(), "the source was neither cancelled nor done"


Schedules.TestCase.settings = settings(
    max_examples=EXAMPLES,
    stateful_step_count=12,
    derandomize=EXAMPLES <= 1000,  # a fixed seed in CI
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestSchedules = Schedules.TestCase
