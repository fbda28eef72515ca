"""Each subscriber of a processor receives its signals in the context it subscribed in."""

from __future__ import annotations

import pytest

from reactive_aio import BehaviorProcessor, Flux, MulticastProcessor, Processor, ReplayProcessor

from ..context_requests import own_values, values_seen

PROCESSORS = {
    "multicast": lambda: MulticastProcessor[int](16),
    "replay": lambda: ReplayProcessor[int](),
    "replay, size 4": lambda: ReplayProcessor[int](size=4),
    "behavior": lambda: BehaviorProcessor[int](initial=-1),
}


@pytest.mark.parametrize("prefetch", [None, 8], ids=["unbounded", "prefetch 8"])
@pytest.mark.parametrize("make", PROCESSORS.values(), ids=PROCESSORS.keys())
async def test_an_upstream_emitting_in_another_context(
    make: type[Processor[int, int]], prefetch: int | None
) -> None:
    # The upstream emits synchronously from a third context: without the rule, both requests
    # would see "producer".
    processor = make()
    seen = await values_seen(
        Flux.from_publisher(processor),
        start=lambda: Flux.range(0, 300).subscribe(processor),
        prefetch=prefetch,
    )
    assert seen == own_values()


@pytest.mark.parametrize("make", PROCESSORS.values(), ids=PROCESSORS.keys())
async def test_an_upstream_emitting_from_loop_callbacks(make: type[Processor[int, int]]) -> None:
    # publish_on emits from loop callbacks, which run in the context they were scheduled from.
    processor = make()
    seen = await values_seen(
        Flux.from_publisher(processor),
        start=lambda: Flux.range(0, 3000).publish_on(buffer_size=32).subscribe(processor),
        names=("a", "b", "c"),
    )
    assert seen == own_values(("a", "b", "c"))


async def test_a_replay_after_termination() -> None:
    processor = ReplayProcessor[int]()
    Flux.range(0, 3).subscribe(processor)
    assert await values_seen(Flux.from_publisher(processor)) == own_values()
