"""``Flux.from_iterable`` and ``Flux.just``: the items of a synchronous iterable.

Backpressure: full; ``next()`` is called only for requested items, from the drain.
Errors: an exception from the iterator ends the stream with ``on_error``; a ``None`` item ends
it with ``on_error(NullSignalError)`` naming its position (rule 2.13), after the items before it.
Fusion: a fused chain of maps and filters behind it runs inside the emit loop, and an item a
filter drops is not counted against demand (see `FusedPublisher`), only toward the drain's
yield to the loop. As a `SyncSource` it hands over ``iter(iterable)`` (a ``flat_map`` pulls
it in its own drain).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from operator import length_hint
from typing import Any, Generic, TypeVar, final

import attrs

from .._core import (
    DROPS_PER_ITEM,
    DrainSubscription,
    Subscriber,
    exact_length,
    null_item_error,
    read_once_error,
    require_not_none,
)
from .._operators._fuse import FusableSource, FusedSubscriber, compile_factory, stage_lines

__all__ = ("IterablePublisher", "IteratorSubscription")

T = TypeVar("T")

EmitLoop = Callable[["IteratorSubscription[Any]", Callable[[Any], object], Iterator[Any], int], int]
"""``loop(subscription, on_next, iterator, limit)``: emit up to *limit* items, return how many."""


@final
@attrs.define(eq=False)
class IterablePublisher(FusableSource[T], Generic[T]):
    """Cold when the iterable can be iterated again (a list); a one-shot iterator (a
    generator, anything whose ``iter()`` is itself) serves its first subscriber, and every
    later one gets ``on_error`` saying so."""

    iterable: Iterable[T]
    _read: bool = attrs.field(default=False, init=False)
    """A one-shot iterator was handed out."""

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self._start(subscriber, None)

    def subscribe_fused(self, chain: FusedSubscriber) -> None:
        self._start(chain, chain)

    def sync_iterator(self) -> Iterator[T] | None:
        try:
            return self._iterator()
        except Exception:  # a subscriber gets the error
            return None

    def _iterator(self) -> Iterator[T]:
        if self._read:
            raise read_once_error("Flux.from_iterable", "__iter__", self.iterable)
        iterator = iter(self.iterable)
        self._read = iterator is self.iterable  # one-shot: whoever comes next gets an error
        return iterator

    def _start(self, subscriber: Subscriber[T], chain: FusedSubscriber | None) -> None:
        iterator: Iterator[T] | None = None
        fault = None
        try:
            iterator = self._iterator()
        except Exception as exc:
            fault = exc
        length = -1 if iterator is None else exact_length(iterator)
        IteratorSubscription[T](
            subscriber, iterator=iterator, fault=fault, length=length, chain=chain
        ).start()


@final
@attrs.define(eq=False)
class IteratorSubscription(DrainSubscription[T]):
    """Emits an iterator's items, through *chain*'s stages when there is one. The iterator of a
    builtin sequence (*length* >= 0, see `exact_length`) completes with its last item; one
    that is not *nullable* (a range) skips the None check."""

    iterator: Iterator[T] | None = attrs.field(default=None, kw_only=True)
    fault: Exception | None = attrs.field(default=None, kw_only=True)
    length: int = attrs.field(default=-1, kw_only=True)
    nullable: bool = attrs.field(default=True, kw_only=True)
    chain: FusedSubscriber | None = attrs.field(default=None, kw_only=True)
    pulled: int = attrs.field(default=0, init=False)
    """Items taken from an unsized iterator so far (a sequence's length hint tells)."""
    _loop_fn: EmitLoop = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        chain = self.chain
        shape = () if chain is None else chain.shape
        functions = () if chain is None else chain.functions
        self._loop_fn = _compile_loop(shape, self.nullable, self.length < 0)(chain, functions)

    def _emit(self, limit: int) -> int:
        iterator = self.iterator
        if iterator is None:
            self._error(self.fault or RuntimeError("iterable unavailable"))
            return 0
        emitted = 0
        if limit > 0:
            chain = self.chain
            if chain is not None:
                on_next: Callable[[Any], object] = chain.emit
            else:
                downstream = self._downstream
                assert downstream is not None
                on_next = downstream.on_next
            emitted = self._loop_fn(self, on_next, iterator, limit)
        # A sequence completes with its last item, without waiting for more demand.
        if self.length >= 0 and self.iterator is not None and not length_hint(iterator):
            self._complete()
        return emitted

    def null_item(self) -> None:
        """The iterator yielded None (rule 2.13): fail the stream, naming its position."""
        iterator = self.iterator
        position = self.pulled
        if self.length >= 0 and iterator is not None:
            position = self.length - length_hint(iterator) - 1
        self._error(null_item_error(position))

    def _release(self) -> None:
        self.iterator = None


@functools.cache
def _compile_loop(
    shape: tuple[bool, ...], nullable: bool, counted: bool
) -> Callable[..., EmitLoop]:
    """The emit loop with the stages of *shape* inlined (none for a plain subscriber), a None
    check when the items may be None and a position count when the iterator is unsized.

    With a filter among the stages, a pass pulls at most what is left of the drain's budget in
    drops (an islice: no count of drops inside the loop) and takes the dropped items off it
    after, `DROPS_PER_ITEM` to an item; it found the end when it pulled fewer. A sequence's
    length hint tells the pulls."""
    drops = False in shape
    stages = stage_lines(shape, drop=["continue"], stop="break")
    count = ["            pulled += 1"] if counted else []
    null_check = [
        "            if item is None:",
        *(["                subscription.pulled = pulled"] if counted else []),
        "                subscription.null_item()",
        "                return emitted",
    ]
    pulls = "pulled - before" if counted else "before - length_hint(iterator)"
    budget = [
        "    budget = subscription._budget",
        f"    most = budget * {DROPS_PER_ITEM}",
        f"    before = {'pulled' if counted else 'length_hint(iterator)'}",
    ]
    if not drops:
        ended = ["        else:", "            subscription._complete()"]
    elif counted:  # the islice ran out: the iterator ended if it gave less than the budget
        ended = [
            "        else:",
            f"            if {pulls} < most:",
            "                subscription._complete()",
        ]
    else:  # _emit finds a sequence's end
        ended = []
    loop = [
        "def emit(subscription, on_next, iterator, limit):",
        *(["    pulled = subscription.pulled"] if counted else []),
        *(budget if drops else []),
        "    emitted = 0",
        "    raised = None",
        "    try:",
        f"        for item in {'islice(iterator, most)' if drops else 'iterator'}:",
        *(null_check if nullable else []),
        *count,
        *(f"            {line}" for line in stages),
        "            try:",
        "                on_next(item)",
        "            except Exception as exc:",  # the subscriber's: the drain reports it (2.13)
        "                raised = exc",
        "                break",
        "            emitted += 1",
        "            if emitted == limit or subscription._done:",  # or on_next cancelled
        "                break",
        *ended,
        "    except Exception as exc:",  # the iterator's own failure
        "        subscription._error(exc)",
        *(["    subscription.pulled = pulled"] if counted else []),
        *(
            [f"    subscription._budget = budget - ({pulls} - emitted) // {DROPS_PER_ITEM}"]
            if drops
            else []
        ),
        "    if raised is not None:",
        "        raise raised",
        "    return emitted",
        "return emit",
    ]
    return compile_factory("emit loop", shape, loop, islice=islice, length_hint=length_hint)
