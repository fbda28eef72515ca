"""Fusion: consecutive synchronous one-to-one and one-to-zero stages as one subscriber.

``flux.map(f).filter(p).map(g)`` assembles into one `FusedPublisher` holding the three stages
(Reactor calls this micro-fusion), so an item crosses one subscriber instead of three. When
the source can run the stages inside its own emit loop (``range``, ``from_iterable``,
``just``), it asks the fused subscriber with `FusedSubscriber.try_next`
whether an item was kept, and counts only kept items against demand (Reactor's conditional
subscriber, macro-fusion): a dropped item costs no ``request`` at all. Behind any other source,
drops are re-requested in batches.

Each stage keeps the behaviour of its operator module (`_map`, `_filter`): the same null
check (rule 2.13), a raising function cancels upstream first and then signals ``on_error``,
in-flight items after a cancel go nowhere (rule 2.8).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Generic, TypeVar, final

import attrs

from .._core import (
    MAX_DEMAND,
    NullSignalError,
    OperatorSubscriber,
    Publisher,
    Subscriber,
    require_not_none,
    short_repr,
)
from .._sources._from_iterable import IterablePublisher
from .._sources._range import RangePublisher

__all__ = ("FusedPublisher", "Stage", "fuse")

T = TypeVar("T")
R = TypeVar("R")

Stage = tuple[bool, Callable[[Any], Any]]
"""``(True, fn)`` maps every item with *fn*; ``(False, predicate)`` keeps the items it holds for."""


@final
@attrs.frozen
class FusedPublisher(Publisher[R], Generic[R]):
    """What `Flux.map` and `Flux.filter` return: *source* seen through *stages*, in order."""

    source: Publisher[Any]
    stages: tuple[Stage, ...]

    def subscribe(self, subscriber: Subscriber[R]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        source = self.source
        if isinstance(source, (IterablePublisher, RangePublisher)):
            fused = FusedSubscriber(subscriber, stages=self.stages, replenish=False)
            source.subscribe_fused(fused, fused.try_next)
        else:
            drops = any(not is_map for is_map, _ in self.stages)
            source.subscribe(FusedSubscriber(subscriber, stages=self.stages, replenish=drops))


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
    try_next: Callable[[Any], bool] = attrs.field(init=False)
    """Run the stages on an item and pass it on; False when a stage dropped it."""

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        shape = tuple(is_map for is_map, _ in self._stages)
        self.try_next = _compile(shape)(self, [fn for _, fn in self._stages])

    def _null(self, item: Any) -> bool:
        self._fail(
            NullSignalError(f"rule 2.13: map's function returned None for {short_repr(item)}")
        )
        return True

    def _stage_failed(self, error: Exception) -> bool:
        self._fail(error)  # user code fails the stream, never the caller
        return True

    def on_next(self, item: Any) -> None:
        kept = self.try_next(item)
        if not self._replenish:
            return
        outstanding = self._outstanding - 1
        if kept:
            self._outstanding = outstanding
            return
        dropped = self._dropped + 1
        # Re-request drops in batches: once they are as many as the items still in flight
        # (at the latest when nothing is in flight, so the stream never stalls).
        if dropped < outstanding:
            self._outstanding = outstanding
            self._dropped = dropped
            return
        self._outstanding = outstanding + dropped
        self._dropped = 0
        upstream = self._upstream
        if upstream is not None:
            upstream.request(dropped)

    def request(self, n: int) -> None:
        if self._replenish:
            if self._hand_over(n):
                return
            if type(n) is int and n > 0:
                outstanding = self._outstanding + n
                if outstanding >= MAX_DEMAND:
                    self._replenish = False  # unbounded: a drop needs no replacement
                else:
                    self._outstanding = outstanding
        super().request(n)


@functools.cache
def _compile(shape: tuple[bool, ...]) -> Callable[..., Callable[[Any], bool]]:
    """A factory of `FusedSubscriber.try_next` for stages of this *shape* (True for a map).

    The stages run as straight-line code, one call per user function: a loop over the stages
    costs about as much per item as the functions themselves. Compiled once per shape.
    """
    names = [f"fn{i}" for i in range(len(shape))]
    body = []
    for name, is_map in zip(names, shape, strict=True):
        if is_map:
            body += [
                f"value = {name}(item)",
                "if value is None:",
                "    return subscriber._null(item)",
                "item = value",
            ]
        else:
            body += [f"if not {name}(item):", "    return False"]
    source = "\n".join(
        [
            "def make(subscriber, fns):",
            f"    {', '.join(names)}, = fns",
            "    def try_next(item):",
            "        try:",
            *(f"            {line}" for line in body),
            "        except Exception as exc:",
            "            return subscriber._stage_failed(exc)",
            "        subscriber._next(item)",
            "        return True",
            "    return try_next",
        ]
    )
    namespace: dict[str, Any] = {}
    exec(compile(source, f"<fused stages {shape}>", "exec"), namespace)
    factory: Callable[..., Callable[[Any], bool]] = namespace["make"]
    return factory
