"""repeat_when: a companion decides each resubscription. ``test_reactor_*`` cases are ported
from reactor-core's ``FluxRepeatWhenTest``."""

from __future__ import annotations

from reactive_aio import Flux
from reactive_aio.testing import TestSubscriber

from ._transform_support import assert_cold_repeater_backpressured


async def test_reactor_cold_repeater() -> None:
    ts = TestSubscriber[int](initial_request=100)
    Flux.just(1).repeat_when(lambda rounds: Flux.range(1, 10)).subscribe(ts)
    ts.assert_values(*[1] * 11).assert_complete()


async def test_reactor_cold_repeater_backpressured() -> None:
    assert_cold_repeater_backpressured(
        Flux.range(1, 2).repeat_when(lambda rounds: Flux.range(1, 5))
    )


async def test_reactor_cancels_other() -> None:
    cancelled: list[bool] = []
    when = Flux.range(1, 10).do_on_cancel(lambda: cancelled.append(True))
    ts = TestSubscriber[int]()
    Flux.just(1).repeat_when(lambda rounds: when).subscribe(ts)
    ts.cancel()
    assert cancelled == [True]


async def test_the_companion_counts_rounds() -> None:
    seen: list[int] = []
    repeated = Flux.just("a").repeat_when(
        lambda rounds: rounds.do_on_next(seen.append).take_while(lambda r: r < 3)
    )
    assert await repeated.to_list() == ["a", "a", "a"]
    assert seen == [1, 2, 3]


async def test_a_source_error_ends_the_stream() -> None:
    ts = TestSubscriber[int](initial_request=10)
    source = Flux.just(1).concat_with(Flux.error(OSError("x")))
    source.repeat_when(lambda rounds: rounds).subscribe(ts)
    ts.assert_values(1).assert_error(OSError)


async def test_repeat_after_a_pause() -> None:
    repeated = Flux.just(1).repeat_when(
        lambda rounds: rounds.concat_map(lambda r: Flux.timer(0.001)).take(2)
    )
    assert await repeated.to_list() == [1, 1, 1]
