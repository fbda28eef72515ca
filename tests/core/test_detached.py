"""A finished stage lets go of its subscriber, even while someone still holds its subscription.

Rule 3.13 as a foreign runtime or a registry of subscriptions exercises it: the subscription
stays referenced after ``cancel()``, and must not be what keeps the subscriber alive. One case
per base class of the kit: `OperatorSubscriber` (``map``), `ArbiterSubscriber` (``retry``),
`BufferDrain` on its upstream side (``debounce``) and `LockstepDrain` (``share``).
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable

import pytest

from reactive_aio import Flux, Subscription
from reactive_aio.testing import TestSubscriber

STAGES: dict[str, Callable[[Flux[int]], Flux[int]]] = {
    "OperatorSubscriber": lambda flux: flux.map(lambda x: x + 1),
    "ArbiterSubscriber": lambda flux: flux.retry(1),
    "BufferDrain": lambda flux: flux.debounce(60.0),
    "LockstepDrain": lambda flux: flux.share(),
}


@pytest.mark.parametrize("base", sorted(STAGES))
async def test_a_cancelled_stage_drops_its_subscriber_while_the_subscription_is_held(
    base: str,
) -> None:
    held: list[Subscription] = []

    def subscribe_and_cancel() -> weakref.ref[TestSubscriber[int]]:
        subscriber = TestSubscriber[int]()
        STAGES[base](Flux.never()).subscribe(subscriber)
        assert subscriber.subscription is not None
        held.append(subscriber.subscription)
        subscriber.cancel()
        return weakref.ref(subscriber)

    gone = subscribe_and_cancel()
    gc.collect()
    assert gone() is None, f"the {base} stage still references its subscriber after cancel"
    assert held  # the subscription is still referenced: it alone must not keep the subscriber


@pytest.mark.parametrize("base", sorted(STAGES))
async def test_a_terminated_stage_drops_its_subscriber_while_the_subscription_is_held(
    base: str,
) -> None:
    held: list[Subscription] = []

    def subscribe_to_the_end() -> weakref.ref[TestSubscriber[int]]:
        subscriber = TestSubscriber[int](initial_request=1)
        STAGES[base](Flux.empty()).subscribe(subscriber)
        subscriber.assert_complete()
        assert subscriber.subscription is not None
        held.append(subscriber.subscription)
        return weakref.ref(subscriber)

    gone = subscribe_to_the_end()
    gc.collect()
    assert gone() is None, f"the {base} stage still references its subscriber after on_complete"
    assert held
