"""TCK cases for the transform, filter, side-effect and error-handling operators.

Name (the `Flux` method) -> publisher of exactly n items, lazy for n up to 2**31 - 1.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from reactive_aio import Flux, Publisher, Retry


def _w(window: Flux[int]) -> Flux[int]:
    return window


def _half(x: int) -> int:
    return x // 2


async def _same(x: int) -> int:
    return x


async def _acquire_nothing() -> None:
    return None


async def _release_nothing(resource: object, error: BaseException | None) -> None:
    return None


@asynccontextmanager
async def _context() -> AsyncIterator[None]:
    yield None


def _failing() -> Flux[int]:
    """Fails at once: the error operators below recover from it."""
    return Flux.error(OSError("recover me"))


CASES: dict[str, Callable[[int], Publisher[int]]] = {
    "scan": lambda n: Flux.range(0, n).scan(lambda a, x: x, 0),
    "index": lambda n: Flux.range(0, n).index().map(lambda pair: pair[0]),
    "take_while": lambda n: Flux.range(0, n).take_while(lambda x: x < n),
    "skip": lambda n: Flux.range(0, n + 5).skip(5),
    "skip_last": lambda n: Flux.range(0, n + 5).skip_last(5),
    "skip_while": lambda n: Flux.range(0, n + 5).skip_while(lambda x: x < 5),
    "distinct": lambda n: Flux.range(0, n).distinct(),
    "distinct_until_changed": lambda n: Flux.range(0, n).distinct_until_changed(),
    "of_type": lambda n: Flux.range(0, n).of_type(int),
    "pairwise": lambda n: Flux.range(0, n + 1).pairwise().map(lambda pair: pair[1]),
    "ignore_elements": lambda n: Flux.range(0, 5).ignore_elements(),
    "then": lambda n: Flux.range(0, 3).then(Flux.range(0, n)),
    "materialize": lambda n: (
        Flux.range(0, n - 1).materialize().map(lambda note: 0) if n else Flux.empty()
    ),
    "dematerialize": lambda n: Flux.range(0, n).materialize().dematerialize(),
    "filter_when": lambda n: Flux.range(0, n).filter_when(lambda x: Flux.just(True)),
    "delay_until": lambda n: Flux.range(0, n).delay_until(lambda x: Flux.empty()),
    "expand": lambda n: Flux.range(0, n).expand(lambda x: Flux.empty()),
    "expand_deep": lambda n: Flux.range(0, n).expand_deep(lambda x: Flux.empty()),
    "switch_on_next": lambda n: Flux.just(Flux.range(0, n)).switch_on_next(),
    "start_with": lambda n: Flux.range(3, max(n - 3, 0)).start_with(*range(min(n, 3))),
    "do_on_next": lambda n: Flux.range(0, n).do_on_next(lambda x: None),
    "do_on_error": lambda n: Flux.range(0, n).do_on_error(lambda e: None),
    "do_on_complete": lambda n: Flux.range(0, n).do_on_complete(lambda: None),
    "do_on_subscribe": lambda n: Flux.range(0, n).do_on_subscribe(lambda s: None),
    "do_on_request": lambda n: Flux.range(0, n).do_on_request(lambda r: None),
    "do_on_cancel": lambda n: Flux.range(0, n).do_on_cancel(lambda: None),
    "do_finally": lambda n: Flux.range(0, n).do_finally(lambda signal: None),
    "log": lambda n: Flux.range(0, n).log("tck", level=5),
    "name": lambda n: Flux.range(0, n).name("tck"),
    "tag": lambda n: Flux.range(0, n).map(_half).tag("suite", "tck"),
    "metrics": lambda n: Flux.range(0, n).name("tck").metrics(),
    "checkpoint": lambda n: Flux.range(0, n).map(_half).checkpoint("tck"),
    "on_error_resume": lambda n: _failing().on_error_resume(lambda e: Flux.range(0, n)),
    "on_error_map": lambda n: Flux.range(0, n).on_error_map(lambda e: e),
    "retry": lambda n: Flux.range(0, n).retry(3),
    "retry_when": lambda n: Flux.range(0, n).retry_when(Retry.max(2)),
    "repeat_when": lambda n: (
        Flux.just(0).repeat_when(lambda rounds: rounds.take_while(lambda r: r < n))
        if n
        else Flux.empty()
    ),
    "switch_on_first": lambda n: Flux.range(0, n).switch_on_first(lambda first, rest: rest),
    "repeat": lambda n: Flux.just(0).repeat(n - 1) if n else Flux.empty().repeat(2),
    "take_until": lambda n: Flux.range(0, n).take_until(Flux.never()),
    "skip_until": lambda n: Flux.range(0, n).skip_until(Flux.just(0)),
    "buffer": lambda n: Flux.range(0, 2 * n).buffer(2).map(len),
    "buffer_until": lambda n: Flux.range(0, 2 * n).buffer_until(lambda x: x % 2 == 1).map(len),
    "buffer_while": lambda n: Flux.range(0, 3 * n).buffer_while(lambda x: x % 3 != 2).map(len),
    "window": lambda n: Flux.range(0, n).window(3).concat_map(lambda window: window),
    "window_overlap": lambda n: Flux.range(0, n).window(2, 1).concat_map(lambda w: w.take(1)),
    "window_until": lambda n: Flux.range(0, n).window_until(lambda x: x % 3 == 2).concat_map(_w),
    "window_while": lambda n: Flux.range(0, 2 * n).window_while(lambda x: x % 2).concat_map(_w),
    "window_until_changed": lambda n: Flux.range(0, n).window_until_changed(_half).concat_map(_w),
    "group_by": lambda n: Flux.range(0, n).group_by(lambda x: x % 4).flat_map(lambda kg: kg[1]),
    "flat_map_iterable": lambda n: Flux.range(0, n).flat_map_iterable(lambda x: (x,)),
    "using": lambda n: Flux.using(lambda: n, lambda k: Flux.range(0, k), lambda k: None),
    "using_async": lambda n: Flux.using_async(
        _acquire_nothing, lambda _: Flux.range(0, n), _release_nothing
    ),
    "using_context": lambda n: Flux.using_context(_context, lambda _: Flux.range(0, n)),
    "map_async": lambda n: Flux.range(0, n).map_async(_same, concurrency=4),
    # one call at a time over a source at hand: one task awaits the calls within demand
    "map_async_at_hand": lambda n: Flux.range(0, n).map_async(_same),
    "map_skip_errors": lambda n: Flux.range(0, n + 1).map_skip_errors(
        lambda x: 1 // x, on_dropped=lambda item, error: None
    ),
}
"""Cases the TCK's library verification runs."""

LIMITS: dict[str, int] = {
    "ignore_elements": 0,  # emits no item whatever its source: tests that need elements skip
}
"""max_elements_from_publisher() of cases that cannot make n items."""

SINGLE: dict[str, Callable[[], Publisher[int]]] = {
    "take_last": lambda: Flux.range(0, 10).take_last(1),
    "element_at": lambda: Flux.range(0, 10).element_at(3),
    "default_if_empty": lambda: Flux.range(0, 0).default_if_empty(7),
    "on_error_return": lambda: Flux.error(OSError("x")).on_error_return(7),
}
"""Publishers of exactly one item (the Reactor TCK's ``maxElementsFromPublisher() == 1``) for
operators that cannot make n lazy items: ``element_at``, ``default_if_empty`` and
``on_error_return`` emit at most one, ``take_last`` holds its items until completion."""

FAILED: dict[str, Callable[[], Publisher[int]]] = {
    "retry": lambda: Flux.error(OSError("always")).retry(2),
    "on_error_map": lambda: Flux.error(OSError("x")).on_error_map(lambda e: KeyError(str(e))),
    "checkpoint": lambda: Flux.error(OSError("x")).checkpoint("tck"),
    "metrics": lambda: Flux.error(OSError("x")).metrics(),
}
"""Publishers that signal on_subscribe then on_error."""
