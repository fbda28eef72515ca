"""OperatorSubscriber: the base of one-in, one-out operators, through a small operator of its
own (items, demand and the end pass through; it fails and completes early by cancelling
upstream; once done it forgets its downstream). PassThroughSubscriber: a stage items never
call."""

from __future__ import annotations

import attrs

from reactive_aio.lowlevel import OperatorSubscriber, PassThroughSubscriber
from reactive_aio.testing import TestSubscriber

from ._support import through


@attrs.define(eq=False)
class _Double(OperatorSubscriber[int, int]):
    def on_next(self, item: int) -> None:
        if item < 0:
            self._fail(ValueError(f"negative: {item}"))
        elif item == 0:
            self._complete_early()
        else:
            self._next(item * 2)


async def test_an_operator_subscriber_passes_items_demand_and_the_endthrough() -> None:
    ts = TestSubscriber[int]()
    source = through(_Double(ts))
    ts.request(2)
    source.next(1, 2)
    source.complete()
    ts.assert_values(2, 4).assert_complete()
    assert source.requests == [2]


async def test_an_operator_subscriber_fails_and_completes_early_by_cancelling_upstream() -> None:
    failed, completed = TestSubscriber[int](), TestSubscriber[int]()
    failing, completing = through(_Double(failed)), through(_Double(completed))
    failed.request(5)
    completed.request(5)
    failing.next(1, -1, 3)  # the 3 arrives after the failure: it goes nowhere
    completing.next(0)
    failed.assert_values(2).assert_error(ValueError, "negative: -1")
    completed.assert_no_values().assert_complete()
    failing.assert_cancelled()
    completing.assert_cancelled()


async def test_a_cancelled_operator_subscriber_forgets_its_downstream() -> None:
    ts = TestSubscriber[int]()
    operator = _Double(ts)
    source = through(operator)
    ts.request(1)
    ts.cancel()
    source.next(1)  # in flight after the cancel (rule 2.8)
    ts.assert_no_values().assert_not_terminated()
    source.assert_cancelled()
    assert operator._downstream is not ts  # rule 3.13


@attrs.define(eq=False)
class _ErrorsSeen(PassThroughSubscriber[int]):
    errors: list[BaseException] = attrs.field(factory=list, kw_only=True)

    def on_error(self, error: BaseException) -> None:
        self.errors.append(error)
        super().on_error(error)


async def test_a_pass_through_stage_is_never_called_for_an_item() -> None:
    ts = TestSubscriber[int]()
    stage = _ErrorsSeen(ts)
    assert stage.on_next == ts.on_next  # upstream calls downstream's own method
    source = through(stage)
    ts.request(3)
    source.next(1, 2)
    source.error(ValueError("boom"))
    ts.assert_values(1, 2).assert_error(ValueError, "boom")
    assert source.requests == [3]
    assert [str(e) for e in stage.errors] == ["boom"]


async def test_a_cancelled_pass_through_stage_forgets_its_downstream() -> None:
    ts = TestSubscriber[int]()
    stage = _ErrorsSeen(ts)
    source = through(stage)
    ts.request(1)
    ts.cancel()
    source.next(1)  # in flight after the cancel (rule 2.8)
    ts.assert_no_values().assert_not_terminated()
    source.assert_cancelled()
    assert stage.on_next != ts.on_next
    assert stage._downstream is not ts
