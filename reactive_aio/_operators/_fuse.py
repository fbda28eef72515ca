"""Fusion: consecutive synchronous one-to-one and one-to-zero stages as one subscriber.

``flux.map(f).filter(p).map(g)`` assembles into one `FusedPublisher` holding the three stages
(what Reactor calls macro-fusion), so an item crosses one subscriber instead of three. When
the source can run the stages inside its own emit loop (a `FusableSource`: ``range``,
``from_iterable``, ``just``), it does, and counts only kept items against demand (Reactor's
micro-fusion with a conditional subscriber): a dropped item costs no ``request`` at all, but
counts toward the drain's yield to the loop. Behind any other source, drops are re-requested
in batches. Over a fusable source the chain is a `SyncSource` too: its iterator runs the
stages on the source's iterator (a ``flat_map`` pulls it without subscribing, its drops
marked for the drain's count, see `SyncInner`).

The stages run as straight-line code, one call per user function, compiled once per shape of
chain (`stage_lines`): a loop over the stages would cost about as much per item as the
functions themselves.

Backpressure: pass-through; a dropped item is not counted against demand inside a fused
source, and re-requested in batches (once drops are as many as the items still in flight)
behind any other source, unless demand is unbounded.
Errors: each stage keeps the behaviour of its operator module (`_map`, `_filter`): the same
null check (rule 2.13); a raising function cancels upstream first and then signals
``on_error``; in-flight items after a cancel go nowhere (rule 2.8).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar, final

import attrs

from .._core import (
    DRAIN_BATCH,
    DROPS_PER_ITEM,
    MAX_DEMAND,
    NullSignalError,
    OperatorSubscriber,
    Publisher,
    Subscriber,
    SyncInner,
    SyncOwner,
    SyncSource,
    add_demand,
    null_item_error,
    require_not_none,
    short_repr,
    stream_error,
)

__all__ = (
    "FusableSource",
    "FusedPublisher",
    "FusedSubscriber",
    "Stage",
    "compile_factory",
    "fuse",
    "stage_lines",
)

T = TypeVar("T")
R = TypeVar("R")

Stage = tuple[bool, Callable[[Any], Any]]
"""``(True, fn)`` maps every item with *fn*; ``(False, predicate)`` keeps the items it holds for."""


class FusableSource(Publisher[T], SyncSource[T]):
    """A source that runs a fused chain inside its own emit loop, and hands its items over as
    an iterator."""

    __slots__ = ()

    def subscribe_fused(self, chain: FusedSubscriber) -> None:
        """Subscribe *chain*, running its stages on every item before passing it on; a dropped
        item does not count against demand."""
        raise NotImplementedError


@final
@attrs.frozen
class FusedPublisher(Publisher[R], SyncSource[R], Generic[R]):
    """What `Flux.map` and `Flux.filter` return: *source* seen through *stages*, in order."""

    source: Publisher[Any]
    stages: tuple[Stage, ...]

    def subscribe(self, subscriber: Subscriber[R]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        source = self.source
        if isinstance(source, FusableSource):
            source.subscribe_fused(FusedSubscriber(subscriber, stages=self.stages, replenish=False))
        else:
            drops = any(not is_map for is_map, _ in self.stages)
            source.subscribe(FusedSubscriber(subscriber, stages=self.stages, replenish=drops))

    def sync_iterator(self) -> Iterator[R] | None:
        return self._items(skips=False)

    def sync_inner(self, owner: SyncOwner) -> SyncInner[R] | None:
        skips = not all(is_map for is_map, _ in self.stages)
        iterator = self._items(skips=skips)
        return None if iterator is None else SyncInner(owner, iterator, skips=skips)

    def _items(self, *, skips: bool) -> Iterator[R] | None:
        """The stages run on the source's iterator; with *skips*, None for every
        pass's worth of drops (``DROPS_PER_ITEM * DRAIN_BATCH``)."""
        source = self.source
        iterator = source.sync_iterator() if isinstance(source, SyncSource) else None
        if iterator is None:
            return None
        stages = self.stages
        items = _compile_items(tuple(is_map for is_map, _ in stages), skips)
        return items(_RAISING, tuple(fn for _, fn in stages))(iterator)


def fuse(source: Publisher[Any], stage: Stage) -> FusedPublisher[Any]:
    """*source* followed by *stage*, merged into *source*'s stages when it is fused already."""
    if isinstance(source, FusedPublisher):
        return FusedPublisher(source.source, (*source.stages, stage))
    return FusedPublisher(source, (stage,))


@final
@attrs.define(eq=False)
class FusedSubscriber(OperatorSubscriber[Any, Any]):
    """Runs the stages on every item and passes on what is kept."""

    _stages: tuple[Stage, ...] = attrs.field(kw_only=True, alias="stages")
    _replenish: bool = attrs.field(kw_only=True, alias="replenish")
    """Drops must be re-requested: upstream counted them as emitted and demand is bounded."""
    _outstanding: int = attrs.field(default=0, init=False)
    """Requested upstream and not received yet (counted while `_replenish`)."""
    _dropped: int = attrs.field(default=0, init=False)
    """Dropped and not re-requested yet."""
    _try_next: Callable[[Any], bool] = attrs.field(init=False)
    """Run the stages on an item and pass it on; False when a stage dropped it."""

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        self._try_next = _compile_try_next(self.shape)(self, self.functions)

    @property
    def shape(self) -> tuple[bool, ...]:
        """True for each map stage, False for each filter, in order."""
        return tuple(is_map for is_map, _ in self._stages)

    @property
    def functions(self) -> tuple[Callable[[Any], Any], ...]:
        """The stages' functions, in order."""
        return tuple(fn for _, fn in self._stages)

    @property
    def emit(self) -> Callable[[Any], None]:
        """Where a kept item goes: downstream's ``on_next`` (nowhere once this is done)."""
        return self._next

    def null(self, item: Any) -> None:
        """A map stage returned None for *item* (rule 2.13): fail the stream."""
        self._fail(_null_result(item))

    def stage_failed(self, error: Exception) -> None:
        """A stage raised: user code fails the stream (upstream cancelled first), never the caller."""
        self._fail(error)

    def on_next(self, item: Any) -> None:
        kept = self._try_next(item)
        if not self._replenish:
            return
        outstanding = self._outstanding - 1
        dropped = self._dropped if kept else self._dropped + 1
        # Re-request drops in batches: once they are as many as the items still in flight
        # (at the latest when nothing is in flight, whether the last item was kept or not:
        # else the stream stalls owing downstream the dropped items).
        if dropped < outstanding or not dropped:
            self._outstanding = outstanding
            self._dropped = dropped
            return
        self._outstanding = outstanding + dropped
        self._dropped = 0
        upstream = self._upstream
        if upstream is not None:
            upstream.request(dropped)

    def _request(self, n: int) -> None:
        if self._replenish and type(n) is int and n > 0:
            outstanding = add_demand(self._outstanding, n)
            if outstanding == MAX_DEMAND:
                self._replenish = False  # unbounded: a drop needs no replacement
            else:
                self._outstanding = outstanding
        super()._request(n)


def stage_lines(shape: tuple[bool, ...], *, drop: list[str], stop: str) -> list[str]:
    """Code that runs the stages ``fn0``, ``fn1``, … of *shape* on ``item`` for ``chain`` (a
    `FusedSubscriber`): the lines *drop* run when a filter drops the item, *stop* after a
    stage failed the stream. Empty for no stages."""
    if not shape:
        return []
    lines = ["try:"]
    for i, is_map in enumerate(shape):
        if is_map:
            lines += [
                f"    value = fn{i}(item)",
                "    if value is None:",
                "        chain.null(item)",
                f"        {stop}",
                "    item = value",
            ]
        else:
            lines += [f"    if not fn{i}(item):", *(f"        {line}" for line in drop)]
    lines += ["except Exception as exc:", "    chain.stage_failed(exc)", f"    {stop}"]
    return lines


def compile_factory(
    name: str, shape: tuple[bool, ...], code: list[str], **names: object
) -> Callable[..., Any]:
    """Compile ``def make(chain, fns): …`` with ``fn0``, ``fn1``, … unpacked from ``fns`` (one
    per stage of *shape*) and *code* after them, which returns the function made; return
    ``make``. The code sees *names* as globals."""
    unpack = [f"{', '.join(f'fn{i}' for i in range(len(shape)))}, = fns"] if shape else []
    source = "\n".join(["def make(chain, fns):", *(f"    {line}" for line in (*unpack, *code))])
    namespace: dict[str, Any] = dict(names)
    exec(compile(source, f"<{name} {shape}>", "exec"), namespace)
    factory: Callable[..., Any] = namespace["make"]
    return factory


@functools.cache
def _compile_try_next(shape: tuple[bool, ...]) -> Callable[..., Callable[[Any], bool]]:
    body = [
        *stage_lines(shape, drop=["return False"], stop="return True"),
        "chain._next(item)",
        "return True",
    ]
    return compile_factory(
        "fused stages",
        shape,
        ["def try_next(item):", *(f"    {line}" for line in body), "return try_next"],
    )


def _null_result(item: Any) -> NullSignalError:
    return NullSignalError(f"rule 2.13: map's function returned None for {short_repr(item)}")


@final
class _Raising:
    """The ``chain`` of the stages in a fused iterator: a failure is raised out of ``next()``."""

    __slots__ = ()

    def null(self, item: Any) -> None:
        raise _null_result(item)

    def null_item(self, position: int) -> None:
        raise null_item_error(position)

    def stage_failed(self, error: Exception) -> None:
        raise stream_error(error)  # as an unfused stage fails: not the generator's own RuntimeError


_RAISING = _Raising()


@functools.cache
def _compile_items(
    shape: tuple[bool, ...], skips: bool
) -> Callable[..., Callable[[Iterator[Any]], Iterator[Any]]]:
    """A generator running the stages of *shape* over a fusable source's iterator, with the
    source's own None check (rule 2.13, by position); with *skips*, it yields None after every
    pass's worth of drops (``DROPS_PER_ITEM * DRAIN_BATCH``), so that the drain pulling it
    gets them counted."""
    # A local countdown per drop: the drain cannot see the items this generator drops.
    per_pass = DROPS_PER_ITEM * DRAIN_BATCH
    marked = ["skip -= 1", "if not skip:", f"    skip = {per_pass}", "    yield None"]
    stages = stage_lines(shape, drop=[*(marked if skips else []), "continue"], stop="return")
    body = [
        "def items(iterator):",
        "    pulled = 0",
        *([f"    skip = {per_pass}"] if skips else []),
        "    for item in iterator:",
        "        if item is None:",
        "            chain.null_item(pulled)",
        "        pulled += 1",
        *(f"        {line}" for line in stages),
        "        yield item",
        "return items",
    ]
    return compile_factory("fused items", shape, body)
