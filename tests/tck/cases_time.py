"""TCK cases for the time sources and operators: name -> publisher of exactly n items.

They run on a real loop, where a timer cannot be shorter than the selector's granularity
(1 ms for epoll and libuv): an operator that waits per item therefore gets a zero (or
microsecond) duration, because the TCK's yield check (rule 3.4) takes 50 000 items within
10 s; the others get tiny or never-firing durations.

Indirect cases (the operator runs once per item inside ``concat_map``, which serves the TCK's
demand), because the stage alone cannot produce exactly n items on demand:

* ``timer`` emits one item;
* ``interval`` cannot be backpressured (a tick without demand is a `MissingBackpressureError`
  by design), so its case puts ``on_backpressure_drop`` after it;
* ``debounce``, ``sample`` and ``throttle_last`` drop by design (and so do their forms steered
  by a publisher, ``buffer`` and ``window`` by a boundary among them), and spacing items wider than
  their window costs at least 1 ms per item on a real loop: each gets a one-item stream whose
  completion flushes the item.

Their timing behaviour is tested on virtual time in tests/operators and tests/sources.
"""

from __future__ import annotations

from collections.abc import Callable

from reactive_aio import Flux, Publisher

CASES: dict[str, Callable[[int], Publisher[int]]] = {
    "elapsed": lambda n: Flux.range(0, n).elapsed().map(lambda pair: pair[1]),
    "timestamp": lambda n: Flux.range(0, n).timestamp().map(lambda pair: pair[1]),
    "interval": lambda n: Flux.interval(1e-6).on_backpressure_drop().take(n),
    "timer": lambda n: Flux.range(0, n).concat_map(lambda i: Flux.timer(0.0).map(lambda _: i)),
    "debounce": lambda n: Flux.range(0, n).concat_map(lambda i: Flux.just(i).debounce(1.0)),
    "sample": lambda n: Flux.range(0, n).concat_map(lambda i: Flux.just(i).sample(1.0)),
    "throttle_last": lambda n: Flux.range(0, n).concat_map(
        lambda i: Flux.just(i).throttle_last(1.0)
    ),
    "debounce_selector": lambda n: Flux.range(0, n).concat_map(
        lambda i: Flux.just(i).debounce(lambda _: Flux.never())
    ),
    "sample_sampler": lambda n: Flux.range(0, n).concat_map(
        lambda i: Flux.just(i).sample(Flux.never())
    ),
    "buffer_boundary": lambda n: Flux.range(0, n).concat_map(
        lambda i: Flux.just(i).buffer(Flux.never()).map(lambda b: b[0])
    ),
    "window_boundary": lambda n: Flux.range(0, n).concat_map(
        lambda i: Flux.just(i).window(Flux.never()).concat_map(lambda w: w)
    ),
    "delay_subscription": lambda n: Flux.range(0, n).delay_subscription(0.001),
    "delay_elements": lambda n: Flux.range(0, n).delay_elements(0.0),
    "delay": lambda n: Flux.range(0, n).delay(0.001),
    "throttle_first": lambda n: Flux.range(0, n).throttle_first(0.0),
    "timeout": lambda n: Flux.range(0, n).timeout(30.0),
    "buffer_timeout": lambda n: Flux.range(0, n).buffer_timeout(1, 0.001).map(lambda b: b[0]),
    "window_timeout": lambda n: Flux.range(0, n).window_timeout(4, 3600.0).concat_map(lambda w: w),
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
