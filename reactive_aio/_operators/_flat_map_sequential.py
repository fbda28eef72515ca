"""``flat_map_sequential``: run inner streams concurrently, emit them in outer order.

Like ``flat_map``, but the items of the inner stream of the first outer item all come
before those of the second, and so on (Reactor's ``flatMapSequential``). Younger inner streams
are subscribed at once and prefetch into their queues while they wait their turn.

Backpressure: as ``flat_map``: at most *concurrency* inner streams at once, each prefetching
at most *prefetch* items and re-requested in batches; downstream demand is honoured exactly.
Errors: an error of the outer source or of any inner stream (even one waiting its turn), or a
raising function, cancels everything, then ``on_error`` once; queued items are dropped.
With ``delay_errors=True`` the error waits until every other inner stream has run and been
emitted, in order (see ``flat_map``).
Loop: none of its own; inner async iterables and awaitables run on the running loop.
"""

from __future__ import annotations

from typing import ClassVar, TypeVar, final

import attrs

from ._flat_map import FlatMapPublisher

__all__ = ("FlatMapSequentialPublisher",)

T = TypeVar("T")
R = TypeVar("R")


@final
@attrs.frozen
class FlatMapSequentialPublisher(FlatMapPublisher[T, R]):
    """What `Flux.flat_map_sequential` returns."""

    _NAME: ClassVar[str] = "flat_map_sequential"
    _ORDERED: ClassVar[bool] = True
