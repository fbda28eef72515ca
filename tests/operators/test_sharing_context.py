"""share, publish and replay: each subscriber's callbacks run in the context it subscribed in."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from reactive_aio import Flux

from ..context_requests import own_values, values_seen


def _published_from_loop_callbacks() -> Flux[int]:
    return Flux.range(0, 3000).publish_on(buffer_size=32)


AUTOMATIC: dict[str, Callable[[], Flux[int]]] = {
    # connected by the first request: upstream emits from callbacks it scheduled
    "share": lambda: _published_from_loop_callbacks().share(buffer_size=16),
    "replay().ref_count()": lambda: _published_from_loop_callbacks().replay().ref_count(),
    # connected inside the second request's subscribe: the first one would see its value
    "publish().auto_connect(2)": lambda: Flux.range(0, 300).publish(buffer_size=16).auto_connect(2),
    "replay().auto_connect(2)": lambda: Flux.range(0, 300).replay(8).auto_connect(2),
    "share, async upstream": lambda: Flux.range(0, 300).delay_elements(0.0001).share(),
}


@pytest.mark.parametrize("prefetch", [None, 8], ids=["unbounded", "prefetch 8"])
@pytest.mark.parametrize("make", AUTOMATIC.values(), ids=AUTOMATIC.keys())
async def test_connected_by_a_subscriber(
    make: Callable[[], Flux[int]], prefetch: int | None
) -> None:
    assert await values_seen(make(), prefetch=prefetch) == own_values()


@pytest.mark.parametrize("kind", ["publish", "replay"])
async def test_connected_from_another_context(kind: str) -> None:
    source = Flux.range(0, 300)
    connectable = source.publish(buffer_size=16) if kind == "publish" else source.replay()
    seen = await values_seen(Flux.from_publisher(connectable), start=connectable.connect)
    assert seen == own_values()
