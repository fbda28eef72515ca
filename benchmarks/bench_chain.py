"""W1 chain: range → map(x*2) → filter(x%3==0) → sum, the per-item cost of the machinery.

Every variant calls the same three functions (`_double`, `_div3`, `_add`), so the differences are
what each library spends between them. reactive_aio is measured consumed by ``reduce`` and by
``async for`` (how a service reads a stream). Run on its own (``python benchmarks/bench_chain.py``)
it prints reactive_aio beside the floors, measured in the same run.

Peers take their fastest path: reactivex ``from_iterable`` (``reactivex.range`` reschedules every
item on its trampoline), aiostream over an async-generator source (``stream.range`` and
``stream.iterate`` of a plain iterable sleep(0) before every item).
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the `benchmarks` package importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._harness import Goal, Variant, Workload
from benchmarks._standalone import standalone


def _double(x: int) -> int:
    return x * 2


def _div3(x: int) -> bool:
    return x % 3 == 0


def _add(acc: int, x: int) -> int:
    return acc + x


def expected(n: int) -> int:
    """Closed form: ``2x`` is a multiple of 3 exactly when ``x`` is, so sum ``6k`` for ``3k < n``."""
    m = (n + 2) // 3
    return 3 * m * (m - 1)


# -- reactive_aio -------------------------------------------------------------------------------


async def reactive_aio_reduce(n: int) -> object:
    from reactive_aio import Flux

    return await Flux.range(0, n).map(_double).filter(_div3).reduce(_add, 0)


async def reactive_aio_async_for(n: int) -> object:
    from reactive_aio import Flux

    total = 0
    async for x in Flux.range(0, n).map(_double).filter(_div3):
        total += x
    return total


# -- floors: hand-written generator chains with the same functions ------------------------------


async def plain_loop(n: int) -> object:
    total = 0
    for x in range(n):
        y = _double(x)
        if _div3(y):
            total = _add(total, y)
    return total


async def plain_loop_in_turns(n: int) -> object:
    """The plain loop as an async service runs a long one: the event loop gets a turn once a
    millisecond has passed, looked at every 1,024 items, as the fused fold gives it."""
    total = 0
    turn_at = time.perf_counter() + 0.001
    for start in range(0, n, 1024):
        for x in range(start, min(start + 1024, n)):
            y = _double(x)
            if _div3(y):
                total = _add(total, y)
        if time.perf_counter() >= turn_at:
            await asyncio.sleep(0)
            turn_at = time.perf_counter() + 0.001
    return total


def _gen_map(fn: Callable[[int], int], source: Iterable[int]) -> Iterator[int]:
    for x in source:
        yield fn(x)


def _gen_filter(pred: Callable[[int], bool], source: Iterable[int]) -> Iterator[int]:
    for x in source:
        if pred(x):
            yield x


async def plain_generators(n: int) -> object:
    total = 0
    for x in _gen_filter(_div3, _gen_map(_double, range(n))):
        total = _add(total, x)
    return total


async def _agen_range(n: int) -> AsyncIterator[int]:
    for x in range(n):
        yield x


async def _agen_map(fn: Callable[[int], int], source: AsyncIterator[int]) -> AsyncIterator[int]:
    async for x in source:
        yield fn(x)


async def _agen_filter(
    pred: Callable[[int], bool], source: AsyncIterator[int]
) -> AsyncIterator[int]:
    async for x in source:
        if pred(x):
            yield x


async def async_generators(n: int) -> object:
    total = 0
    async for x in _agen_filter(_div3, _agen_map(_double, _agen_range(n))):
        total = _add(total, x)
    return total


# -- peers, written the way their documentation shows -------------------------------------------


async def aiostream_pipe(n: int) -> object:
    from aiostream import pipe, stream

    # aiostream types map's function as also taking *args (for zipping several sources); a
    # one-argument function is what its documentation passes for a single source.
    mapped = pipe.map(_double)  # type: ignore[arg-type]
    xs = stream.iterate(_agen_range(n)) | mapped | pipe.filter(_div3) | pipe.reduce(_add, 0)
    return await xs


async def reactivex_pipe(n: int) -> object:
    import reactivex
    from reactivex import operators as ops

    results: list[int] = []
    source = reactivex.from_iterable(range(n)).pipe(
        ops.map(_double), ops.filter(_div3), ops.reduce(_add, 0)
    )
    source.subscribe(on_next=results.append)
    return results[-1]


async def streamz_stream(n: int) -> object:
    from streamz import Stream

    source = Stream()
    last = 0

    def keep(total: int) -> None:
        nonlocal last
        last = total

    sink = source.map(_double).filter(_div3).accumulate(_add, start=0).sink(keep)
    for x in range(n):
        source.emit(x)
    sink.destroy()  # sinks register themselves globally; this one is done
    return last


async def aioreactive_pipe(n: int) -> object:
    import aioreactive as rx
    from expression import pipe

    xs = pipe(rx.from_iterable(range(n)), rx.map(_double), rx.filter(_div3), rx.reduce(_add, 0))
    return await rx.run(xs, timeout=3600)


REDUCE = "reactive_aio reduce"
ASYNC_FOR = "reactive_aio async for"
PLAIN_LOOP = "plain loop"
PLAIN_LOOP_IN_TURNS = "plain loop in turns"
ASYNC_GENERATORS = "async generators"

WORKLOADS = (
    Workload(
        key="W1",
        name="chain",
        title="range → map(x*2) → filter(x%3==0) → sum",
        description="Per-item cost of a synchronous operator chain; one task, no buffering.",
        metric="ns/item",
        expected=expected,
        n=1_000_000,
        quick_n=5_000,
        variants=(
            Variant(
                REDUCE,
                reactive_aio_reduce,
                role="subject",
                needs=(
                    "reactive_aio.Flux.range",
                    "reactive_aio.Flux.map",
                    "reactive_aio.Flux.filter",
                    "reactive_aio.Flux.reduce",
                ),
                note="`await Flux.range(0, n).map(f).filter(p).reduce(add, 0)`",
            ),
            Variant(
                ASYNC_FOR,
                reactive_aio_async_for,
                role="subject",
                needs=("reactive_aio.Flux.range", "reactive_aio.Flux.__aiter__"),
                note="`async for` over the same chain (default prefetch)",
            ),
            Variant(
                PLAIN_LOOP,
                plain_loop,
                role="floor",
                note="one `for` loop calling the three functions: a chain fused by hand",
            ),
            Variant(
                PLAIN_LOOP_IN_TURNS,
                plain_loop_in_turns,
                role="floor",
                note="the plain loop giving the event loop a turn (`sleep(0)`) once a millisecond "
                "has passed, looked at every 1,024 items, as the fused fold does",
            ),
            Variant(
                "plain generators",
                plain_generators,
                role="floor",
                note="a chain of generator functions",
            ),
            Variant(
                ASYNC_GENERATORS,
                async_generators,
                role="floor",
                note="a chain of async generator functions, consumed with `async for`",
            ),
            Variant(
                "aiostream iterate(async gen)",
                aiostream_pipe,
                needs=("aiostream",),
                note="`stream.iterate(async_gen) | pipe.map | pipe.filter | pipe.reduce`; "
                "`stream.range` would sleep(0) before every item",
            ),
            Variant(
                "reactivex from_iterable",
                reactivex_pipe,
                needs=("reactivex",),
                note="`reactivex.from_iterable(range(n)).pipe(ops.map, ops.filter, ops.reduce)`, "
                "subscribed synchronously; no demand (push only)",
            ),
            Variant(
                "streamz emit",
                streamz_stream,
                needs=("streamz",),
                note="`Stream().map.filter.accumulate.sink`, `emit()` per item; no demand",
            ),
            Variant(
                "aioreactive from_iterable",
                aioreactive_pipe,
                needs=("aioreactive",),
                note="`pipe(from_iterable, map, filter, reduce)`, `rx.run`; an awaited `asend` "
                "per item and stage",
            ),
        ),
        goals=(
            Goal(
                "W1 range→map→filter→sum, reduce form, vs one plain `for` loop calling the "
                "same three functions (the floor)",
                REDUCE,
                PLAIN_LOOP,
                "cost",
                1.10,
                1.28,
            ),
            Goal(
                "W1 the reduce form vs the plain loop giving the event loop the same turns "
                "(one a millisecond)",
                REDUCE,
                PLAIN_LOOP_IN_TURNS,
                "cost",
                1.10,
            ),
            Goal(
                "W1 range→map→filter→sum, reduce form, vs the async-generator chain",
                REDUCE,
                ASYNC_GENERATORS,
                "cost",
                0.60,
                0.95,
            ),
            Goal(
                "W1 the same chain consumed with `async for`, vs the async-generator chain",
                ASYNC_FOR,
                ASYNC_GENERATORS,
                "cost",
                0.80,
                2.9,
            ),
        ),
    ),
)


if __name__ == "__main__":
    raise SystemExit(standalone(WORKLOADS, sys.argv[1:]))
