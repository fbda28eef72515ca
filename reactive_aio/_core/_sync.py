"""Synchronous sources taken as iterators: `SyncSource` and `SyncInner`.

A source whose items are at hand (a range, a list, ``just``, a fused map/filter chain over
one of those) can give them as a plain iterator instead of being subscribed to. An operator
that flattens inner streams (``flat_map`` and the operators built on it, ``switch_map``,
``flat_map_iterable``) then pulls each item inside its own drain as it emits it: no inner
subscriber, subscription, queue or re-request, which is what most of the cost of a short
inner stream is. Reactor calls this synchronous fusion.

API
---
`SyncSource`
    A mixin for a `Publisher` that may offer ``sync_iterator()``: a fresh iterator over what a
    subscriber would get, or ``None`` when its items are not at hand (the caller subscribes);
    and ``sync_inner(owner)``: that iterator as a `SyncInner` of *owner*'s drain.
`SyncInner` ``(owner, iterator)``
    The twin of `QueueSubscriber` for a drain's owner (a `QueueDrain`, or any
    `DrainSubscription` with ``inner_error``): the same ``queue``, ``done``,
    ``error``, ``index``, ``consumed`` and ``cancel`` the owner's pass uses, but ``queue`` is
    the `SyncInner` itself and the drain's ``_emit_from`` pulls from its iterator only the
    items it emits. Whatever the iterator raises, and a ``None`` item (rule 2.13, named by
    position), goes to ``owner.inner_error``, as a subscribed source's ``on_error`` would.
    When a pass stops at its limit, one item is looked ahead (when the iterator cannot tell
    its length) so that the owner learns of the end without waiting for more demand; an
    owner that needs to know only at the very end passes ``ahead=False`` and calls
    ``look_ahead`` itself. The iterator of a source that drops items (a fused filter) yields
    None in place of every pass's worth of items it dropped (``DROPS_PER_ITEM * DRAIN_BATCH``,
    ``skips=True``): the drain counts them as a pass, so an inner that drops long runs, or everything, cannot hold the loop.
`exact_length` ``(iterator)``
    The items left in an iterator of a builtin sequence (a range, list, tuple, str, bytes or
    bytearray), ``-1`` for any other: PEP 424 lets ``__length_hint__`` guess, so only these
    hints may end a stream; any other iterator ends when it raises StopIteration (a dict's
    or a set's hint drops to 0 when it changes size, before its iterator raises).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import chain
from operator import length_hint
from typing import Any, Generic, Protocol, TypeVar, final

import attrs

from ._exceptions import NullSignalError

__all__ = ("SyncInner", "SyncOwner", "SyncSource", "exact_length", "null_item_error")

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)

_END: Any = object()

_SEQUENCES: tuple[Iterable[Any], ...] = (
    range(0),
    range(2**64),  # a range beyond a C long has an iterator type of its own
    [],
    reversed([]),
    (),
    "",
    "\u20ac",  # str iterators differ by the width of the characters on some versions
    b"",
    bytearray(),
)
_EXACT: frozenset[type] = frozenset(type(iter(sequence)) for sequence in _SEQUENCES)
"""Iterator types whose length hint is the exact count of the items left."""


def exact_length(iterator: Iterator[Any]) -> int:
    """The items left in *iterator* when it iterates a builtin sequence, else ``-1``."""
    return length_hint(iterator) if type(iterator) in _EXACT else -1


def null_item_error(position: int) -> NullSignalError:
    """Rule 2.13 for a synchronous source whose item number *position* (from 0) is None."""
    return NullSignalError(f"rule 2.13: item #{position} of the iterable is None")


class SyncSource(Generic[T_co]):
    """A publisher that may hand over its items as an iterator instead of emitting them.

    A mixin beside `Publisher` (not a protocol: ``isinstance`` against it costs no Python call).
    """

    __slots__ = ()

    def sync_iterator(self) -> Iterator[T_co] | None:
        """A fresh iterator over the items a subscriber would get, or ``None`` when they are
        not at hand. Must not raise: a source that cannot start returns ``None`` and reports
        its failure to a subscriber. What the iterator raises is the source's failure."""
        return None

    def sync_inner(self, owner: SyncOwner) -> SyncInner[T_co] | None:
        """`sync_iterator` as an inner of *owner*'s drain, or ``None`` when the items are not
        at hand. A source that drops items overrides it to mark its drops (``skips``)."""
        iterator = self.sync_iterator()
        return None if iterator is None else SyncInner(owner, iterator)


class SyncOwner(Protocol):
    """What a `SyncInner` reports to: the subscription whose drain pulls it."""

    def inner_error(self, inner: Any, error: BaseException) -> None:
        """*inner* failed with *error*."""


@final
@attrs.define(eq=False, repr=False)
class SyncInner(Generic[T]):
    """A `SyncSource`'s iterator, pulled by its owner's drain as it emits."""

    _owner: SyncOwner
    _source: Iterator[T] | None
    """The source's iterator; ``None`` once it ended, failed or was cancelled."""
    iterator: Iterator[T] | None = attrs.field(init=False)
    """What the next pass pulls from: the source's iterator, behind an item looked ahead."""
    index: int = 0
    """A slot number for the owner's bookkeeping."""
    ahead: bool = attrs.field(default=True, kw_only=True)
    """Look one item ahead whenever a pass stops at its limit or without demand, so that the
    owner learns of the end without more demand; False: only when the owner calls
    `look_ahead`."""
    skips: bool = attrs.field(default=False, kw_only=True)
    """The iterator yields None in place of every pass's worth of items it dropped, never as
    an item (it raises for a None item itself)."""
    pulled: int = attrs.field(default=0, init=False)
    """Items emitted so far, counted at the end of each pass (for a None item's position)."""
    done: bool = attrs.field(default=False, init=False)
    """The iterator ended or failed (its error, if any, is in ``error``)."""
    error: BaseException | None = attrs.field(default=None, init=False)
    queue: SyncInner[T] = attrs.field(init=False)
    """What the drain's ``_emit_from`` takes: this object, true while items may remain."""
    live: list[bool] = attrs.field(init=False)
    """Emptied when pulling stops: what a running emit loop checks after every item (an
    owner may cancel this inner from inside ``on_next``, as ``switch_map`` does)."""

    def __attrs_post_init__(self) -> None:
        self.iterator = self._source
        self.queue = self
        self.live = [True]

    def __bool__(self) -> bool:
        return self.iterator is not None

    def consumed(self, count: int) -> None:
        """Nothing to re-request: items are pulled as they are emitted."""

    def cancel(self) -> None:
        """Stop pulling: the iterator is dropped and never advanced again."""
        self._source = self.iterator = None
        self.live.clear()

    # -- what the drain's emit loop calls -----------------------------------------------

    def ended(self) -> None:
        """The iterator is exhausted."""
        self.done = True
        self.cancel()

    def failed(self, error: BaseException) -> None:
        """The iterator raised *error*, or yielded None: the owner hears it as an inner error."""
        self.ended()
        self.error = error
        self._owner.inner_error(self, error)

    def null_item(self, position: int) -> None:
        """The iterator yielded None as its item number *position* (rule 2.13)."""
        self.failed(null_item_error(position))

    def passed(self, count: int, at_limit: bool) -> None:
        """A pass emitted *count* items (an item held ahead went first) and stopped at its
        limit, or because the stream stopped."""
        self.pulled += count
        if count:
            self.iterator = self._source
        if at_limit and self.ahead:
            self.look_ahead()

    def look_ahead(self) -> None:
        """Find out whether anything is left, so that the owner can finish without further
        demand: one item is pulled and held when the iterator cannot tell its length."""
        source = self._source
        if source is None or self.iterator is not source:  # ended, or an item is held already
            return
        remaining = exact_length(source)
        if remaining > 0:
            self.iterator = source
            return
        if remaining < 0:
            try:
                item = next(source, _END)
            except Exception as exc:
                self.failed(exc)
                return
            if item is None:
                if not self.skips:
                    self.null_item(self.pulled)
                return  # (a run of drops: whether anything is left is still unknown)
            if item is not _END:
                self.iterator = chain((item,), source)
                return
        self.ended()
