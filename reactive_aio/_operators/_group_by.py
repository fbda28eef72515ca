"""``group_by``: split the stream into one sub-stream per key, emitted as ``(key, group)``.

Each group is a `UnicastBuffer`: one subscriber, its own demand, items buffered until
requested. A group opens with the first item of its key; when a group's subscriber cancels,
the group is forgotten and a later item with that key opens a new group.

The back-pressure trap: upstream is asked for *prefetch* items and only re-asked as items are
consumed, by group subscribers or dropped with a cancelled group. A group that nobody
subscribes to, or whose subscriber stops requesting, keeps its items, and once *prefetch*
items wait the whole stream stalls. Consume every group (or cancel it), and keep the number
of groups small: *max_groups* bounds the groups open at once, and one more key ends the
stream with an error instead of buffering without end.

Backpressure: upstream prefetch of *prefetch* items, replenished in batches as groups consume;
new groups are emitted within the outer demand. Cancelling the outer stream stops new groups
(items of new keys are dropped); upstream is cancelled once every open group is done too.
Errors: if *key* raises, or a key beyond *max_groups* arrives, upstream is cancelled, every
group and the outer subscriber get ``on_error``; an upstream error reaches every group (after
its buffered items) and the outer subscriber.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar, final

import attrs

from .._core import (
    BufferDrain,
    Publisher,
    Replenisher,
    StageScan,
    Subscriber,
    Subscription,
    UnicastBuffer,
    require_not_none,
)

__all__ = ("DEFAULT_MAX_GROUPS", "GROUP_PREFETCH", "GroupByPublisher")

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)
G = TypeVar("G")

DEFAULT_MAX_GROUPS = 1024
"""Groups open at once before ``group_by`` fails."""

GROUP_PREFETCH = 256
"""Items ``group_by`` asks upstream for ahead of consumption."""


@final
@attrs.frozen(kw_only=True)
class GroupByPublisher(Publisher[tuple[K, G]], Generic[T, K, G]):
    """What `Flux.group_by` returns; *wrap* turns each group publisher into what is emitted."""

    source: Publisher[T]
    key: Callable[[T], K]
    wrap: Callable[[Publisher[T]], G]
    max_groups: int = DEFAULT_MAX_GROUPS
    prefetch: int = GROUP_PREFETCH

    def __attrs_post_init__(self) -> None:
        if self.max_groups <= 0 or self.prefetch <= 0:
            raise ValueError(
                f"group_by max_groups and prefetch must be > 0, got {self.max_groups}, "
                f"{self.prefetch}"
            )

    def subscribe(self, subscriber: Subscriber[tuple[K, G]]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(_GroupBy[T, K, G](subscriber, options=self))


@final
@attrs.define(eq=False)
class _GroupBy(BufferDrain[tuple[K, G]], Subscriber[T], Generic[T, K, G]):
    """Upstream's subscriber, and the outer subscription (a buffer of new groups)."""

    _options: GroupByPublisher[T, K, G] = attrs.field(kw_only=True, alias="options")
    _groups: dict[K, UnicastBuffer[T]] = attrs.field(factory=dict, init=False)
    _replenisher: Replenisher = attrs.field(init=False)
    _outer_cancelled: bool = attrs.field(default=False, init=False)
    _upstream_ended: bool = attrs.field(default=False, init=False)

    def __attrs_post_init__(self) -> None:
        self._replenisher = Replenisher(self._options.prefetch)

    def scan_stage(self) -> StageScan:
        """The outer buffer holds new groups; each open group is an inner chain, with its
        key, the items it holds and their bound: the *prefetch* window all groups share."""
        prefetch = self._options.prefetch
        groups = tuple(_group_scan(key, group, prefetch) for key, group in self._groups.items())
        return attrs.evolve(
            super().scan_stage(), upstream=self._replenisher.upstream, inners=groups
        )

    # -- upstream signals ---------------------------------------------------------------

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "2.13", "on_subscribe's subscription")
        replenisher = self._replenisher
        if replenisher.upstream is not None or self._upstream_ended:
            subscription.cancel()  # rule 2.5
            return
        replenisher.upstream = subscription  # kept from here on: start() may cancel it
        self.start()
        if not self._outer_cancelled:
            subscription.request(self._options.prefetch)

    def on_next(self, item: T) -> None:
        if self._upstream_ended:
            return
        options = self._options
        try:
            key = options.key(item)
            group = self._groups.get(key)
        except Exception as exc:
            self._fail_all(exc)
            return
        if group is None:
            if self._outer_cancelled:
                self._replenisher.consumed(1)  # nobody can see a new group any more
                return
            if len(self._groups) >= options.max_groups:
                self._fail_all(
                    RuntimeError(
                        f"group_by: key {key!r} would open group number {options.max_groups + 1}"
                        f" (max_groups={options.max_groups}); groups must be consumed and end,"
                        " or max_groups raised"
                    )
                )
                return
            group = UnicastBuffer[T](
                on_consumed=self._replenisher.consumed, on_done=lambda: self._group_done(key, group)
            )
            self._groups[key] = group
            self.push((key, options.wrap(group)))
        group.push(item)

    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        self._end_upstream(error)

    def on_complete(self) -> None:
        self._end_upstream(None)

    # -- groups -------------------------------------------------------------------------

    def _group_done(self, key: K, group: UnicastBuffer[T] | None) -> None:
        if group is not None and self._groups.get(key) is group:
            del self._groups[key]
        if self._outer_cancelled and not self._groups:
            self._cancel_upstream()

    # -- ending -------------------------------------------------------------------------

    def _end_upstream(self, error: BaseException | None) -> None:
        if self._upstream_ended:
            return
        self._upstream_ended = True
        self._replenisher.upstream = None
        groups = list(self._groups.values())
        self._groups.clear()
        for group in groups:
            group.end(error)
        self.finish(error)

    def _fail_all(self, error: BaseException) -> None:
        self._replenisher.cancel()
        self._end_upstream(error)

    def _cancel_upstream(self) -> None:
        """Outer and every group are done: nobody wants more items."""
        self._upstream_ended = True
        self._replenisher.cancel()

    def _release(self) -> None:
        # Groups still queued here were never seen: a queued key's group is the current one,
        # since a group for the same key can only reopen after this one was subscribed.
        unseen = [key for key, _ in self._queue]
        super()._release()
        if self._upstream_ended:
            return
        self._outer_cancelled = True
        for key in unseen:
            group = self._groups.pop(key, None)
            if group is not None:
                group.discard()
        if not self._groups:
            self._cancel_upstream()


def _group_scan(key: Hashable, group: UnicastBuffer[T], prefetch: int) -> StageScan:
    scan = group.scan_stage()
    return attrs.evolve(
        scan, operator="group", capacity=prefetch, tags=(("key", repr(key)), *scan.tags)
    )
