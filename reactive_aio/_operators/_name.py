"""``name`` and ``tag``: label a stream, for ``metrics``, ``log`` and ``snapshot``.

A label costs nothing per item. Fusion sees through it (`Transparent`): a map or filter after
it fuses with the stages before it, and a fold or ``async for`` over a synchronous source
stays a plain loop. Subscribed, its `LabelSubscriber` stands in the chain for ``request``,
``cancel`` and the terminal signals, while items go past it: its ``on_next`` is downstream's
own, so upstream calls downstream directly.

A ``name`` or ``tag`` right after another label merges into it (one stage). What a stage
reads, `labels_of`, is the nearest name upstream and the tags of every label upstream (the
nearer one wins for a key repeated), found through the ``source`` of each single-source
operator, as Reactor's ``metrics()`` reads the ``name()`` and ``tag()`` set before it.

Backpressure: pass-through; ``request(n)`` goes upstream unchanged.
Errors: none of its own; upstream signals pass through.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar, final

import attrs

from .._core import (
    AsyncBoundarySubscriber,
    PassThroughSubscriber,
    Publisher,
    Subscriber,
    Transparent,
    require_not_none,
)

__all__ = ("DEFAULT_NAME", "LabelPublisher", "LabelSubscriber", "label", "labels_of")

T = TypeVar("T")

Tags = tuple[tuple[str, str], ...]

DEFAULT_NAME = "reactive_aio"
"""The name of a stream that has none upstream (Reactor's is ``"reactor"``)."""


@final
@attrs.frozen
class LabelPublisher(Publisher[T], Transparent[T], Generic[T]):
    """What `Flux.name` and `Flux.tag` return: *source* with a name (``None``: only tags)
    and tags."""

    source: Publisher[T]
    name: str | None = None
    tags: Tags = ()

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(LabelSubscriber(subscriber, name=self.name or "", tags=self.tags))

    def over(self, source: Publisher[Any]) -> LabelPublisher[Any]:
        return LabelPublisher(source, self.name, self.tags)


def label(source: Publisher[T], name: str | None = None, tags: Tags = ()) -> LabelPublisher[T]:
    """*source* labelled with *name* and *tags*, merged into a label *source* is already."""
    if name is not None and not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}")
    for key, value in tags:
        if not isinstance(key, str) or not isinstance(value, str):
            raise TypeError(f"a tag is a str key and a str value, got {key!r}: {value!r}")
    if isinstance(source, LabelPublisher):
        kept = tuple((key, value) for key, value in source.tags if key not in dict(tags))
        return LabelPublisher(source.source, name or source.name, (*kept, *tags))
    return LabelPublisher(source, name, tags)


def labels_of(publisher: Publisher[Any]) -> tuple[str | None, Tags]:
    """The nearest name upstream of (and including) *publisher*, and the tags of every label
    there, the nearer one first for a repeated key."""
    name: str | None = None
    tags: dict[str, str] = {}
    current: object = publisher
    while isinstance(current, Publisher):
        if isinstance(current, LabelPublisher):
            name = name or current.name
            for key, value in current.tags:
                tags.setdefault(key, value)
        current = getattr(current, "source", None)
    return name, tuple(tags.items())


@final
@attrs.define(eq=False)
class LabelSubscriber(PassThroughSubscriber[T], AsyncBoundarySubscriber[T]):
    """The label in a running chain: ``stage_name`` (``""`` for a stage of tags only) and
    ``stage_tags`` say what it is; items never call it. An async boundary before it fuses
    with the subscriber after it (``publish_on`` then ``async for``), as without the label."""

    stage_name: str = attrs.field(kw_only=True, alias="name")
    stage_tags: Tags = attrs.field(kw_only=True, alias="tags")

    def take_boundary(self, prefetch: int, replenish: int) -> bool:
        downstream = self._downstream
        return isinstance(downstream, AsyncBoundarySubscriber) and downstream.take_boundary(
            prefetch, replenish
        )
