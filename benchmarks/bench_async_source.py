"""W6 async source: an async generator → map(x*2) → filter(x%3==0) → sum.

The chain of W1 behind a source that awaits, which is what a service's streams start from (a
socket, a broker, a database cursor). Every variant reads the same async generator and calls the
same three functions as W1, so the differences are what each spends between them. The floor is
what an expert writes by hand: one ``async for`` loop over the source doing map, filter and sum
inline; a chain of async generators is the idiomatic second row.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the `benchmarks` package importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._harness import Goal, Variant, Workload
from benchmarks._standalone import standalone
from benchmarks.bench_chain import (
    _add,
    _agen_filter,
    _agen_map,
    _agen_range,
    _div3,
    _double,
    expected as _expected,
)


async def reactive_aio_reduce(n: int) -> object:
    from reactive_aio import Flux

    chain = Flux.from_async_iterable(_agen_range(n)).map(_double).filter(_div3)
    return await chain.reduce(_add, 0)


async def reactive_aio_async_for(n: int) -> object:
    from reactive_aio import Flux

    total = 0
    async for x in Flux.from_async_iterable(_agen_range(n)).map(_double).filter(_div3):
        total = _add(total, x)
    return total


async def inline_loop(n: int) -> object:
    total = 0
    async for x in _agen_range(n):
        y = _double(x)
        if _div3(y):
            total = _add(total, y)
    return total


async def async_generators(n: int) -> object:
    total = 0
    async for x in _agen_filter(_div3, _agen_map(_double, _agen_range(n))):
        total = _add(total, x)
    return total


async def aiostream_pipe(n: int) -> object:
    from aiostream import pipe, stream

    mapped = pipe.map(_double)  # type: ignore[arg-type]  # (see bench_chain)
    xs = stream.iterate(_agen_range(n)) | mapped | pipe.filter(_div3) | pipe.reduce(_add, 0)
    return await xs


REDUCE = "reactive_aio reduce"
ASYNC_FOR = "reactive_aio async for"
INLINE = "one async for loop"

WORKLOADS = (
    Workload(
        key="W6",
        name="async_source",
        title="async generator → map(x*2) → filter(x%3==0) → sum",
        description="Per-item cost of a synchronous chain behind a source that awaits.",
        metric="ns/item",
        expected=_expected,
        n=1_000_000,
        quick_n=5_000,
        variants=(
            Variant(
                REDUCE,
                reactive_aio_reduce,
                role="subject",
                needs=("reactive_aio.Flux.from_async_iterable", "reactive_aio.Flux.reduce"),
                note="`await Flux.from_async_iterable(agen).map(f).filter(p).reduce(add, 0)`",
            ),
            Variant(
                ASYNC_FOR,
                reactive_aio_async_for,
                role="subject",
                needs=("reactive_aio.Flux.from_async_iterable", "reactive_aio.Flux.__aiter__"),
                note="`async for` over the same chain (default prefetch)",
            ),
            Variant(
                INLINE,
                inline_loop,
                role="floor",
                note="`async for x in agen:` with map, filter and sum inline: the chain fused "
                "by hand",
            ),
            Variant(
                "async generators",
                async_generators,
                role="floor",
                note="a chain of async generator functions over the same source",
            ),
            Variant(
                "aiostream iterate(async gen)",
                aiostream_pipe,
                needs=("aiostream",),
                note="`stream.iterate(agen) | pipe.map | pipe.filter | pipe.reduce`",
            ),
        ),
        goals=(
            Goal(
                "W6 async source → map → filter → sum, reduce form, vs one inline `async for` "
                "loop (the floor)",
                REDUCE,
                INLINE,
                "cost",
                1.2,
                4.7,
            ),
            Goal(
                "W6 the same chain consumed with `async for`, vs the same inline loop",
                ASYNC_FOR,
                INLINE,
                "cost",
                1.3,
                4.7,
            ),
        ),
    ),
)


if __name__ == "__main__":
    raise SystemExit(standalone(WORKLOADS, sys.argv[1:]))
