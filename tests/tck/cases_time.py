"""TCK cases for the time sources and operators: name -> publisher of exactly n items.

They run on a real loop, so durations are tiny (1-3 ms) or long enough never to fire.
``interval`` and ``timer`` have no case: ``interval`` cannot be backpressured (a tick
without demand is a `MissingBackpressureError`, by design) and ``timer`` emits one item.
The lossy operators (debounce, sample, throttle) get an upstream spaced wider than their
window, so that they drop nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from reactive_aio import Flux, Publisher


def _spaced(n: int, seconds: float) -> Flux[int]:
    """``0 … n-1``, one every *seconds* (at least), produced only as requested."""
    return Flux.range(0, n).delay_elements(seconds)


CASES: dict[str, Callable[[int], Publisher[int]]] = {
    "delay_subscription": lambda n: Flux.range(0, n).delay_subscription(0.001),
    "delay_elements": lambda n: Flux.range(0, n).delay_elements(0.001),
    "delay": lambda n: Flux.range(0, n).delay(0.001),
    "debounce": lambda n: _spaced(n, 0.002).debounce(0.001),
    "throttle_first": lambda n: _spaced(n, 0.002).throttle_first(0.001),
    "sample": lambda n: _spaced(n, 0.003).sample(0.001),
    "throttle_last": lambda n: _spaced(n, 0.003).throttle_last(0.001),
    "timeout": lambda n: Flux.range(0, n).timeout(30.0),
    "buffer_timeout": lambda n: Flux.range(0, n).buffer_timeout(1, 0.001).map(lambda b: b[0]),
    "take_for": lambda n: Flux.range(0, n).take_for(3600.0),
    "skip_for": lambda n: Flux.range(0, n).skip_for(0.0),
    "retry_backoff": lambda n: Flux.range(0, n).retry_backoff(
        2, first_backoff=0.001, max_backoff=0.002
    ),
}
"""Cases the TCK's library verification runs; sizes up to 2**31 - 1 stay lazy."""

FAILED: dict[str, Callable[[], Publisher[int]]] = {
    "timeout": lambda: Flux.never().timeout(0.001),
    "retry_backoff": lambda: Flux.error(RuntimeError("failed publisher")).retry_backoff(
        1, first_backoff=0.001, max_backoff=0.001
    ),
}
"""Publishers that signal on_subscribe then on_error."""
