"""A plain-Python reference model of operator chains, to compare the library against.

Each entry says how to apply an operator to a `Flux` and what the same operator does to a
plain list of items followed by a terminal outcome ("complete" or an exception).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import attrs
from hypothesis import strategies as st

from reactive_aio import Flux
from reactive_aio.lowlevel import DRAIN_BATCH, DROPS_PER_ITEM

Outcome = tuple[list[int], str | BaseException]
"""Items, then "complete" or the error that ended the stream."""


@attrs.frozen
class OperatorModel:
    """One operator: a parameter strategy, its library form and its model form."""

    params: st.SearchStrategy[Any]
    apply: Callable[[Flux[int], Any], Flux[int]]
    model: Callable[[Outcome, Any], Outcome]
    eager_error: bool = False
    """An upstream error overtakes work in flight (queued or awaited items are dropped), as
    in Reactor's default error mode; the items before the error are then any prefix."""


def _map_model(outcome: Outcome, k: int) -> Outcome:
    items, end = outcome
    return [x * k + 1 for x in items], end


def _filter_model(outcome: Outcome, m: int) -> Outcome:
    items, end = outcome
    return [x for x in items if x % m != 0], end


def _fused_model(outcome: Outcome, km: tuple[int, int]) -> Outcome:
    return _filter_model(_map_model(outcome, km[0]), km[1])


def _take_model(outcome: Outcome, n: int) -> Outcome:
    items, end = outcome
    if len(items) >= n:
        return items[:n], "complete"
    return items, end


def _items(fn: Callable[[list[int], Any], list[int]]) -> Callable[[Outcome, Any], Outcome]:
    """A model that rewrites the items and keeps how the stream ends."""
    return lambda outcome, param: (fn(outcome[0], param), outcome[1])


def _ended(fn: Callable[[list[int], Any], list[int]]) -> Callable[[Outcome, Any], Outcome]:
    """A model for operators that emit only at completion: nothing more on an error."""
    return lambda outcome, param: (
        fn(outcome[0], param) if outcome[1] == "complete" else [],
        outcome[1],
    )


def _take_while(items: list[int], limit: int) -> Outcome:
    for i, x in enumerate(items):
        if not x < limit:
            return items[:i], "complete"
    return items, "?"


def _scan(items: list[int], seed: int) -> list[int]:
    out, acc = [], seed
    for x in items:
        acc = acc + x
        out.append(acc)
    return out


def _distinct_until_changed(items: list[int], _: object) -> list[int]:
    return [x for i, x in enumerate(items) if i == 0 or items[i - 1] != x]


def _skip_while(items: list[int], limit: int) -> list[int]:
    for i, x in enumerate(items):
        if not x < limit:
            return items[i:]
    return []


def _buffer_model(outcome: Outcome, size: int) -> Outcome:
    # as in Reactor, an error discards the partly filled buffer; completion emits it
    items, end = outcome
    full = len(items) if end == "complete" else len(items) - len(items) % size
    return [sum(items[i : i + size]) for i in range(0, full, size)], end


def _take_while_model(outcome: Outcome, limit: int) -> Outcome:
    items, end = _take_while(outcome[0], limit)
    return items, outcome[1] if end == "?" else end


LONG_GAP = DROPS_PER_ITEM * DRAIN_BATCH + 1
"""Items a filter drops in a row: more than one drain pass may take."""

STOPPED = RuntimeError("user code raised StopIteration")
"""How the model ends a stream whose user function raised StopIteration or StopAsyncIteration
(the library chains the RuntimeError from it)."""


@attrs.define
class Hinting:
    """*items* behind a ``__length_hint__`` that says *hint*, whatever is left: PEP 424 lets
    a hint guess, so only StopIteration may end the items."""

    items: Iterator[int]
    hint: int

    def __iter__(self) -> Hinting:
        return self

    def __next__(self) -> int:
        return next(self.items)

    def __length_hint__(self) -> int:
        return self.hint


def _stop_at(x: int, trigger: int) -> int:
    """*x*, or StopIteration for *trigger*: what ``next()`` on a search that finds nothing does."""
    rows = [x] if x != trigger else []
    return next(iter(rows))


async def _stop_async_at(x: int, trigger: int) -> int:
    if x == trigger:
        raise StopAsyncIteration
    return x


def _stop_iteration(flux: Flux[int], trigger: int, filtering: bool) -> Flux[int]:
    if filtering:
        return flux.filter(lambda x: _stop_at(x, trigger) == x)
    return flux.map(lambda x: _stop_at(x, trigger))


def _stopped(outcome: Outcome, trigger: int) -> Outcome:
    items, end = outcome
    if trigger in items:
        return items[: items.index(trigger)], STOPPED
    return items, end


def _sparse_inner(flux: Flux[int], gap: int, ordered: bool) -> Flux[int]:
    """Every item, after *gap* - 1 items that a fused filter drops inside its inner (in
    order: unordered, one inner at a time)."""

    def inner(x: int) -> Flux[int]:
        return Flux.range(0, gap).filter(lambda i: i == gap - 1).map(lambda _: x)

    return flux.concat_map(inner) if ordered else flux.flat_map(inner, concurrency=1)


def _hinting_inner(flux: Flux[int], hint: int, iterable: bool) -> Flux[int]:
    """Every item twice, from an inner iterator whose length hint says *hint*."""
    if iterable:
        return flux.flat_map_iterable(lambda x: Hinting(iter([x, x]), hint))
    return flux.concat_map(lambda x: Flux.from_iterable(Hinting(iter([x, x]), hint)))


OPERATORS: dict[str, OperatorModel] = {
    "map": OperatorModel(st.integers(-3, 3), lambda f, k: f.map(lambda x: x * k + 1), _map_model),
    "filter": OperatorModel(
        st.integers(2, 4), lambda f, m: f.filter(lambda x: x % m != 0), _filter_model
    ),
    # map and filter with no checker between them: they fuse into one stage
    "map.filter": OperatorModel(
        st.tuples(st.integers(-3, 3), st.integers(2, 4)),
        lambda f, km: f.map(lambda x: x * km[0] + 1).filter(lambda x: x % km[1] != 0),
        _fused_model,
    ),
    "take": OperatorModel(st.integers(0, 30), lambda f, n: f.take(n), _take_model),
    "skip": OperatorModel(st.integers(0, 10), lambda f, n: f.skip(n), _items(lambda xs, n: xs[n:])),
    "skip_last": OperatorModel(
        st.integers(0, 5),
        lambda f, n: f.skip_last(n),
        _items(lambda xs, n: xs[: max(len(xs) - n, 0)]),
    ),
    "take_last": OperatorModel(
        st.integers(1, 5), lambda f, n: f.take_last(n), _ended(lambda xs, n: xs[-n:])
    ),
    "scan": OperatorModel(
        st.integers(0, 3), lambda f, seed: f.scan(lambda a, x: a + x, seed), _items(_scan)
    ),
    "take_while": OperatorModel(
        st.integers(5, 60), lambda f, n: f.take_while(lambda x: x < n), _take_while_model
    ),
    "skip_while": OperatorModel(
        st.integers(5, 60), lambda f, n: f.skip_while(lambda x: x < n), _items(_skip_while)
    ),
    "distinct": OperatorModel(
        st.just(None), lambda f, _: f.distinct(), _items(lambda xs, _: list(dict.fromkeys(xs)))
    ),
    "distinct_until_changed": OperatorModel(
        st.just(None), lambda f, _: f.distinct_until_changed(), _items(_distinct_until_changed)
    ),
    "start_with": OperatorModel(
        st.integers(0, 9), lambda f, x: f.start_with(x), _items(lambda xs, x: [x, *xs])
    ),
    "buffer": OperatorModel(st.integers(1, 4), lambda f, n: f.buffer(n).map(sum), _buffer_model),
    "flat_map_iterable": OperatorModel(
        st.integers(0, 2),
        lambda f, k: f.flat_map_iterable(lambda x: [x] * k),
        _items(lambda xs, k: [x for x in xs for _ in range(k)]),
        eager_error=True,
    ),
    "concat_map": OperatorModel(
        st.integers(1, 2),
        lambda f, k: f.concat_map(lambda x: Flux.range(x, k)),
        _items(lambda xs, k: [y for x in xs for y in range(x, x + k)]),
        eager_error=True,
    ),
    "flat_map_sequential": OperatorModel(
        st.integers(1, 2),
        lambda f, k: f.flat_map_sequential(lambda x: Flux.range(x, k), concurrency=3),
        _items(lambda xs, k: [y for x in xs for y in range(x, x + k)]),
        eager_error=True,
    ),
    "map_async": OperatorModel(
        st.integers(1, 3),
        lambda f, c: f.map_async(_add_one, concurrency=c),
        _items(lambda xs, _: [x + 1 for x in xs]),
        eager_error=True,
    ),
    "publish_on": OperatorModel(
        st.integers(1, 8), lambda f, n: f.publish_on(buffer_size=n), _items(lambda xs, _: xs)
    ),
    "limit_rate": OperatorModel(
        st.integers(1, 8), lambda f, n: f.limit_rate(n), _items(lambda xs, _: xs)
    ),
    # Sub-streams. Groups are runs of consecutive positions, each taken whole by take():
    # every group ends from inside its own on_next, groups after the first are subscribed
    # late (their items replayed), and a small prefetch makes that consumption replenish
    # upstream, also in the middle of a replay.
    "group_by": OperatorModel(
        st.tuples(st.integers(1, 4), st.integers(3, 8)),
        lambda f, wp: _group_runs(f, *wp),
        _items(lambda xs, _: xs),
        eager_error=True,
    ),
    "window": OperatorModel(
        st.integers(1, 4).flatmap(lambda w: st.tuples(st.just(w), st.integers(1, w))),
        lambda f, wt: f.window(wt[0]).concat_map(lambda window: window.take(wt[1])),
        _items(lambda xs, wt: [x for i, x in enumerate(xs) if i % wt[0] < wt[1]]),
        eager_error=True,
    ),
    # User functions that raise StopIteration (map_async's async one StopAsyncIteration): the
    # stream fails with a RuntimeError, fused or not.
    "stop_iteration": OperatorModel(
        st.tuples(st.integers(0, 50), st.booleans()),
        lambda f, tf: _stop_iteration(f, *tf),
        lambda outcome, tf: _stopped(outcome, tf[0]),
    ),
    "stop_iteration_inner": OperatorModel(  # a fused inner, pulled by concat_map's drain
        st.integers(0, 50),
        lambda f, t: f.concat_map(lambda x: Flux.just(x).map(lambda y: _stop_at(y, t))),
        _stopped,
        eager_error=True,
    ),
    "stop_async_iteration": OperatorModel(
        st.integers(0, 50),
        lambda f, t: f.map_async(lambda x: _stop_async_at(x, t), concurrency=2),
        _stopped,
        eager_error=True,
    ),
    # Inners whose filter drops long runs (the drain yields mid-run), whose length hint lies.
    "sparse_inner": OperatorModel(
        st.tuples(st.sampled_from([1, LONG_GAP]), st.booleans()),
        lambda f, go: _sparse_inner(f, *go),
        _items(lambda xs, _: xs),
        eager_error=True,
    ),
    "hinting_inner": OperatorModel(
        st.tuples(st.sampled_from([0, 1, 100]), st.booleans()),
        lambda f, hi: _hinting_inner(f, *hi),
        _items(lambda xs, _: [x for x in xs for _ in range(2)]),
        eager_error=True,
    ),
    # Multicast stages with their one subscriber.
    "share": OperatorModel(
        st.integers(1, 8), lambda f, n: f.share(buffer_size=n), _items(lambda xs, _: xs)
    ),
    "publish": OperatorModel(
        st.integers(1, 8),
        lambda f, n: f.publish(buffer_size=n).ref_count(),
        _items(lambda xs, _: xs),
    ),
    "replay": OperatorModel(
        st.integers(0, 3),
        lambda f, h: f.replay(h).ref_count(),
        _items(lambda xs, _: xs),
        eager_error=True,  # an upstream error reaches a subscriber before its unread items
    ),
}
"""Every operator the randomized schedules combine; extend it as operators land."""


async def _add_one(x: int) -> int:
    return x + 1


def _group_runs(flux: Flux[int], width: int, prefetch: int) -> Flux[int]:
    """``group_by`` position // *width*, every group taken whole, in order: the identity."""
    return (
        flux.index()
        .group_by(lambda pair: pair[0] // width, prefetch=prefetch)
        .concat_map(lambda group: group[1].take(width).map(lambda pair: pair[1]))
    )
