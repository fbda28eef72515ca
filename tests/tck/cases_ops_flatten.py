"""TCK cases for the flattening and combining operators: name -> publisher of exactly n items."""

from __future__ import annotations

from collections.abc import Callable

from reactive_aio import Flux, Publisher


def _split(n: int) -> tuple[int, int]:
    """n = a + b, for operators that join two sources."""
    return n // 2, n - n // 2


def _merge(n: int) -> Publisher[int]:
    a, b = _split(n)
    return Flux.merge(Flux.range(0, a), Flux.range(a, b))


def _merge_with(n: int) -> Publisher[int]:
    a, b = _split(n)
    return Flux.range(0, a).merge_with(Flux.range(a, b))


def _concat(n: int) -> Publisher[int]:
    a, b = _split(n)
    return Flux.concat(Flux.range(0, a), Flux.range(a, b))


def _concat_with(n: int) -> Publisher[int]:
    a, b = _split(n)
    return Flux.range(0, a).concat_with(Flux.range(a, b))


def _pairs(n: int) -> Callable[[int], Publisher[int]]:
    """Inner streams of two items (the last one of one item when n is odd), n items in all."""
    return lambda i: Flux.range(2 * i, 2 if 2 * i + 1 < n else 1)


def _halves(n: int) -> int:
    return (n + 1) // 2


def _fused_pairs(n: int) -> Callable[[int], Publisher[int]]:
    """`_pairs` through a fused map/filter chain (every fourth item of the range kept)."""
    return lambda i: (
        Flux.range(8 * i, 8 if 2 * i + 1 < n else 4).filter(lambda x: x % 4 == 0).map(_quarter)
    )


def _quarter(x: int) -> int:
    return x // 4


def _generated_pairs(n: int) -> Callable[[int], Publisher[int]]:
    """`_pairs` from one-shot generators, whose end is found only by pulling past it."""
    return lambda i: Flux.from_iterable(x for x in range(2 * i, min(2 * i + 2, n)))


CASES: dict[str, Callable[[int], Publisher[int]]] = {
    "flat_map": lambda n: Flux.range(0, _halves(n)).flat_map(_pairs(n), concurrency=4),
    "flat_map_fused_inners": lambda n: Flux.range(0, _halves(n)).flat_map(
        _fused_pairs(n), concurrency=4
    ),
    "flat_map_generator_inners": lambda n: Flux.range(0, _halves(n)).flat_map(
        _generated_pairs(n), concurrency=4
    ),
    "flat_map_sequential": lambda n: Flux.range(0, _halves(n)).flat_map_sequential(
        _pairs(n), concurrency=4
    ),
    "concat_map": lambda n: Flux.range(0, _halves(n)).concat_map(_pairs(n)),
    "concat_map_generator_inners": lambda n: Flux.range(0, _halves(n)).concat_map(
        _generated_pairs(n)
    ),
    "switch_map": lambda n: Flux.just(0).switch_map(lambda _: Flux.range(0, n)),
    "merge": _merge,
    "merge_with": _merge_with,
    "concat": _concat,
    "concat_with": _concat_with,
    "zip": lambda n: Flux.zip(Flux.range(0, n), Flux.range(0, n)).map(lambda p: p[0] + p[1]),
    "zip_with": lambda n: Flux.range(0, n).zip_with(Flux.range(0, n + 1)).map(lambda p: p[0]),
    "combine_latest": lambda n: Flux.combine_latest(Flux.just(1), Flux.range(0, n)).map(
        lambda p: p[1]
    ),
    "with_latest_from": lambda n: (
        Flux.range(0, n).with_latest_from(Flux.just(1)).map(lambda p: p[0])
    ),
    "race": lambda n: Flux.race(Flux.never(), Flux.range(0, n)),
    "map_in_thread": lambda n: Flux.range(0, n).map_in_thread(lambda x: x + 1, concurrency=2),
}
"""Cases the TCK's library verification runs; sizes up to 2**31 - 1 stay lazy."""

FAILED: dict[str, Callable[[], Publisher[int]]] = {
    "flat_map": lambda: Flux.error(RuntimeError("failed publisher")).flat_map(Flux.just),
    "concat_map": lambda: Flux.just(1).concat_map(lambda _: Flux.error(RuntimeError("inner"))),
    "merge": lambda: Flux.merge(Flux.never(), Flux.error(RuntimeError("failed publisher"))),
    "zip": lambda: Flux.zip(Flux.never(), Flux.error(RuntimeError("failed"))).map(lambda p: 0),
    "race": lambda: Flux.race(Flux.never(), Flux.error(RuntimeError("failed publisher"))),
}
"""Publishers that signal on_subscribe then on_error."""
