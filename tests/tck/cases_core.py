"""TCK cases for the core sources and operators: name -> publisher of exactly n items."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

from reactive_aio import Flux, Publisher

from ..thread_publisher import ThreadPublisher


async def _count(n: int) -> AsyncIterator[int]:
    for i in range(n):
        yield i


CASES: dict[str, Callable[[int], Publisher[int]]] = {
    # just() holds its items, so the TCK's lazy 2**31 - 1 probe goes through the same
    # IterablePublisher via a range instead of materialising two billion arguments
    "just": lambda n: Flux.just(*range(n)) if n <= 1024 else Flux.from_iterable(range(n)),
    "from_iterable": lambda n: Flux.from_iterable(range(n)),
    "range": lambda n: Flux.range(0, n),
    "defer": lambda n: Flux.defer(lambda: Flux.range(0, n)),
    "from_async_iterable": lambda n: Flux.from_async_iterable(_count(n)),
    "from_publisher": lambda n: Flux.from_publisher(Flux.range(0, n)),
    # a publisher of another library that signals from its own thread, through the boundary
    "from_publisher(thread)": lambda n: Flux.from_publisher(ThreadPublisher(range(n))),
    "from_publisher(thread).map": lambda n: Flux.from_publisher(ThreadPublisher(range(n))).map(
        lambda x: x + 1
    ),
    "map": lambda n: Flux.range(0, n).map(lambda x: x + 1),
    "filter": lambda n: Flux.range(0, 2 * n).filter(lambda x: x % 2 == 0),
    "take": lambda n: Flux.range(0, n + 10).take(n),
    # fused chains: inside the source's emit loop (range, from_iterable, just), and as one
    # subscriber behind a source that cannot run them (drops re-requested in batches)
    "range.map.filter.map": lambda n: (
        Flux.range(0, 2 * n).map(lambda x: x + 1).filter(lambda x: x % 2 == 0).map(lambda x: x // 2)
    ),
    "from_iterable.filter.map": lambda n: (
        Flux.from_iterable(range(3 * n)).filter(lambda x: x % 3 == 1).map(lambda x: x - 1)
    ),
    "just.map.filter": lambda n: (
        Flux.just(*range(2 * n)).map(lambda x: x * 2).filter(lambda x: x % 4 == 0)
        if n <= 512
        else Flux.from_iterable(range(2 * n)).map(lambda x: x * 2).filter(lambda x: x % 4 == 0)
    ),
    "from_async_iterable.filter.map": lambda n: (
        Flux.from_async_iterable(_count(2 * n)).filter(lambda x: x % 2 == 0).map(lambda x: x + 1)
    ),
    "from_publisher(thread).filter": lambda n: Flux.from_publisher(
        ThreadPublisher(range(2 * n))
    ).filter(lambda x: x % 2 == 1),
}
"""Cases the TCK's library verification runs; sizes up to 2**31 - 1 must stay lazy."""

FAILED: dict[str, Callable[[], Publisher[int]]] = {
    "error": lambda: Flux.error(RuntimeError("failed publisher")),
    "error.map.filter": lambda: (
        Flux.error(RuntimeError("failed publisher")).map(lambda x: x).filter(lambda x: True)
    ),
    "from_publisher(thread)": lambda: Flux.from_publisher(
        ThreadPublisher(range(0), error=RuntimeError("failed publisher"))
    ),
}
"""Publishers that signal on_subscribe then on_error."""
