"""SizedTimedOperator: groups bounded in size and in time, on a BufferDrain (the library's own
configuration of the buffer mechanism, behind buffer_timeout and window_timeout)."""

from __future__ import annotations

import asyncio

import attrs

from reactive_aio import MAX_DEMAND
from reactive_aio._core import SizedTimedOperator
from reactive_aio.lowlevel import Deadline
from reactive_aio.testing import TestPublisher, TestSubscriber


@attrs.define(eq=False)
class _Groups(SizedTimedOperator[int, tuple[int, ...]]):
    """Tuples of up to *max_size* items, cut when full, when time is up or at the end."""

    group: list[int] = attrs.field(factory=list, init=False)

    def on_next(self, item: int) -> None:
        self.group.append(item)
        if len(self.group) == 1:
            assert self.deadline is not None
            self.deadline.arm_in(self._max_time)
        if len(self.group) >= self._max_size:
            self.cut()

    def cut(self) -> None:
        assert self.deadline is not None
        self.deadline.disarm()
        if self.group:
            group, self.group = tuple(self.group), []
            self.push(group)

    def _ending(self, error: BaseException | None) -> None:
        self.cut()
        self.finish(error)


def _groups(ts: TestSubscriber[tuple[int, ...]], max_time: float) -> TestPublisher[int]:
    operator = _Groups(ts, max_size=2, max_time=max_time)
    operator.deadline = Deadline(asyncio.get_running_loop(), operator.cut)
    source = TestPublisher[int].create()
    source.subscribe(operator)
    return source


async def test_every_group_asked_for_takes_max_size_items_upstream() -> None:
    ts = TestSubscriber[tuple[int, ...]]()
    source = _groups(ts, 60.0)
    assert source.requests == []  # subscribed downstream at once, asks nothing yet
    ts.request(3)
    assert source.requests == [6]
    ts.request(MAX_DEMAND)
    assert source.requests == [6, MAX_DEMAND]  # saturated


async def test_a_group_is_cut_when_full_when_its_time_is_up_and_at_the_end() -> None:
    ts = TestSubscriber[tuple[int, ...]](initial_request=10)
    source = _groups(ts, 0.01)
    source.next(1, 2, 3)
    ts.assert_values((1, 2))
    await ts.wait_for_values(2)  # the deadline cuts the group of one
    source.next(4)
    source.complete()
    ts.assert_values((1, 2), (3,), (4,)).assert_complete()


async def test_groups_that_become_due_without_demand_are_held_not_dropped() -> None:
    ts = TestSubscriber[tuple[int, ...]](initial_request=1)
    source = _groups(ts, 0.01)
    source.next(1)
    await ts.wait_for_values(1)
    source.next(2)  # demand used up: the group that the time cuts waits in the buffer
    await asyncio.sleep(0.05)
    source.error(OSError("after the held group"))
    ts.assert_values((1,)).assert_not_terminated()
    ts.request(1)
    ts.assert_values((1,), (2,)).assert_error(OSError, match="after the held group")
