"""Scanning a running chain: what every stage holds, owes and has done (Reactor's ``Scannable``).

One small protocol: a runtime stage (a subscriber, a subscription, or both) has a method
``scan_stage()`` returning a `StageScan`: its figures and the objects to walk on to, its
*upstream* (the next stage towards the source) and its *inners* (the heads of the chains it
runs inside: ``flat_map``'s inner streams, ``group_by``'s groups). The kit's bases implement it
once, so an operator gets it by inheritance and only one with extra structure adds to it.
`snapshot` walks from the consumer up to the source; an object without the method (a foreign
publisher's subscription) becomes a stage named after its class with no figures, so the walk
never fails.

Every figure comes from what a stage keeps anyway: nothing is counted per item for this. A
figure a stage cannot know without such a count is ``None``.

A live chain is touched from its loop only: `snapshot` must be called on the thread running
that loop (from another thread, ask the loop with ``loop.call_soon_threadsafe``); called
elsewhere it raises rather than read figures a running pass is changing.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from typing import Any, Literal

import attrs

from ._demand import MAX_DEMAND
from ._loop import current_loop

__all__ = (
    "Snapshot",
    "StageScan",
    "StageSnapshot",
    "StageState",
    "operator_name",
    "register_handle",
    "scan_of",
    "snapshot",
    "stage_state",
)

StageState = Literal["active", "completed", "cancelled", "failed", "ended"]
"""Where a stage is: running, or ended by completion, cancellation or failure; ``ended`` when
the stage only knows that it ended (a pass-through keeps no more than a flag)."""

_MAX_DEPTH = 256
"""Stages walked in one chain at most: a guard against a chain that loops back on itself."""


def stage_state(*, ended: bool, cancelled: bool = False, error: object = None) -> StageState:
    """The state of a stage from its flags: failed (an *error*), cancelled, completed or active."""
    if error is not None:
        return "failed"
    if cancelled:
        return "cancelled"
    return "completed" if ended else "active"


@attrs.frozen(kw_only=True)
class StageScan:
    """What one runtime stage reports of itself (its ``scan_stage()``): its figures, ``None``
    where it keeps none, and the objects the walk goes on to."""

    operator: str
    """The stage's operator (``map``, ``publish_on``): by default `operator_name` of its class."""
    state: StageState = "active"
    demand: int | None = None
    """Requested by downstream and not delivered yet (``MAX_DEMAND``: unbounded)."""
    buffered: int | None = None
    """Items held here, waiting for demand or a reader."""
    capacity: int | None = None
    """The most items this stage holds (its prefetch window, its bound)."""
    emitted: int | None = None
    """Items passed downstream so far."""
    error: BaseException | None = None
    """The error the stage failed with."""
    upstream: object = None
    """The next stage towards the source, walked on."""
    inners: tuple[object, ...] = ()
    """The heads of the inner chains this stage runs, each walked as a chain."""
    loop: asyncio.AbstractEventLoop | None = None
    """The loop the stage runs on, when it knows: `snapshot` refuses another thread."""
    tags: tuple[tuple[str, str], ...] = ()
    """Key/value pairs about the stage (a group's key); a ``stage_tags`` attribute of the
    runtime object adds to them."""


_STAGE_PARTS = (
    "reactive_aio._operators.",
    "reactive_aio._sources.",
    "reactive_aio._sinks.",
    "reactive_aio._processors.",
)


_NAMES: dict[type[Any], str] = {}
"""`operator_name` of each class asked about so far."""


def operator_name(cls: type[Any]) -> str:
    """The operator a runtime class belongs to: a ``stage_operator`` class attribute it
    declares itself, else its module's name for a class of an operator, source, sink or
    processor module (one per module: ``reactive_aio._operators._map`` gives ``map``), else
    the name of the nearest such class it derives from, else its class name (a foreign one)."""
    name = _NAMES.get(cls)
    if name is None:
        name = _NAMES[cls] = _derived_name(cls)
    return name


def _derived_name(cls: type[Any]) -> str:
    for base in cls.__mro__:
        declared = base.__dict__.get("stage_operator")
        if isinstance(declared, str):
            return declared
        module = base.__module__
        if module.startswith(_STAGE_PARTS):
            return module.rsplit(".", 1)[1].lstrip("_")
    return cls.__name__


def scan_of(stage: object) -> StageScan:
    """What *stage* reports of itself; a stage without ``scan_stage`` (a foreign one) is named
    after its class, with no figures."""
    scan: Callable[[], StageScan] | None = getattr(stage, "scan_stage", None)
    if scan is None:
        return StageScan(operator=operator_name(type(stage)))
    return scan()


_HANDLES: weakref.WeakKeyDictionary[Any, object] = weakref.WeakKeyDictionary()
"""Handles a user holds (an ``async for`` iterator) and the stage each stands for."""


def register_handle(handle: object, stage: object) -> None:
    """Let `snapshot` of *handle* (an async generator over a chain) start from *stage*."""
    _HANDLES[handle] = stage


@attrs.frozen(kw_only=True)
class StageSnapshot:
    """One stage of a `Snapshot` (see `StageScan` for the figures)."""

    operator: str
    name: str | None
    tags: tuple[tuple[str, str], ...]
    state: StageState
    demand: int | None
    buffered: int | None
    capacity: int | None
    emitted: int | None
    error: str | None
    inners: tuple[tuple[StageSnapshot, ...], ...]
    """The inner chains, each from its consumer end up to its source."""

    def to_dict(self) -> dict[str, Any]:
        """The stage as plain JSON-able values (``demand`` saturates at ``MAX_DEMAND``)."""
        return {
            "operator": self.operator,
            "name": self.name,
            "tags": dict(self.tags),
            "state": self.state,
            "demand": self.demand,
            "buffered": self.buffered,
            "capacity": self.capacity,
            "emitted": self.emitted,
            "error": self.error,
            "inners": [[stage.to_dict() for stage in chain] for chain in self.inners],
        }

    def line(self) -> str:
        """The stage on one line: operator, name, tags, state and the known figures."""
        parts = [self.operator]
        if self.name is not None:
            parts.append(repr(self.name))
        if self.tags:
            parts.append("{" + ", ".join(f"{k}={v}" for k, v in self.tags) + "}")
        parts.append(f"[{self.state}]")
        if self.demand is not None:
            parts.append(f"demand={'unbounded' if self.demand >= MAX_DEMAND else self.demand}")
        if self.buffered is not None:
            bound = "" if self.capacity is None else f"/{self.capacity}"
            parts.append(f"buffered={self.buffered}{bound}")
        elif self.capacity is not None:
            parts.append(f"capacity={self.capacity}")
        if self.emitted is not None:
            parts.append(f"emitted={self.emitted}")
        if self.error is not None:
            parts.append(f"error={self.error}")
        return " ".join(parts)


@attrs.frozen
class Snapshot:
    """A running chain at one moment, from its consumer (``stages[0]``) up to its source.

    ``str()`` draws it as a tree, each stage above the one it pulls from, inner chains as
    branches; `to_dict` gives it as JSON-able values.
    """

    stages: tuple[StageSnapshot, ...]

    def to_dict(self) -> dict[str, Any]:
        """``{"stages": [...]}``, consumer first, each stage as `StageSnapshot.to_dict`."""
        return {"stages": [stage.to_dict() for stage in self.stages]}

    def __str__(self) -> str:
        return "\n".join(_draw(self.stages, "", "")) if self.stages else ""


def _draw(chain: tuple[StageSnapshot, ...], first: str, rest: str) -> list[str]:
    """Lines of *chain*: its first stage, then as branches its inner chains and the rest of
    the chain (the stage's upstream), each below the stage that pulls from it."""
    stage = chain[0]
    lines = [first + stage.line()]
    children = [(f"inner {index}: ", inner) for index, inner in enumerate(stage.inners)]
    if len(chain) > 1:
        children.append(("", chain[1:]))
    for index, (label, child) in enumerate(children):
        last = index == len(children) - 1
        lines += _draw(
            child, rest + ("└─ " if last else "├─ ") + label, rest + ("   " if last else "│  ")
        )
    return lines


def _chain(
    head: object, seen: set[int], loop: asyncio.AbstractEventLoop | None
) -> list[StageSnapshot]:
    """Scan *head* and the stages upstream of it; a stage seen already ends the chain."""
    stages: list[StageSnapshot] = []
    stage: object = head
    while stage is not None and id(stage) not in seen and len(stages) < _MAX_DEPTH:
        seen.add(id(stage))
        scan = stage if isinstance(stage, StageScan) else scan_of(stage)
        if scan.loop is not None and scan.loop is not loop:
            raise RuntimeError(
                "snapshot() reads a live chain: call it on the thread of the loop the chain "
                "runs on (from another thread, through loop.call_soon_threadsafe)"
            )
        name = getattr(stage, "stage_name", None)
        tags = getattr(stage, "stage_tags", ())
        stages.append(
            StageSnapshot(
                operator=scan.operator,
                name=name if isinstance(name, str) else None,
                tags=scan.tags + tuple((str(k), str(v)) for k, v in tags),
                state=scan.state,
                demand=scan.demand,
                buffered=scan.buffered,
                capacity=scan.capacity,
                emitted=scan.emitted,
                error=None if scan.error is None else repr(scan.error),
                inners=tuple(
                    tuple(chain) for inner in scan.inners if (chain := _chain(inner, seen, loop))
                ),
            )
        )
        stage = scan.upstream
    return stages


def snapshot(running: object) -> Snapshot:
    """Every stage of a running chain, from the consumer up to the source.

    Args:
        running: what a subscription left in your hands: the `Disposable` that
            ``flux.subscribe(...)`` returns, an ``async for`` iterator
            (``flux.__aiter__()``, `to_async_iterator`), or any subscriber or subscription
            of the chain (the walk starts there).

    Returns:
        A `Snapshot`: ``str()`` is a tree for humans, ``to_dict()`` JSON-able values.

    Raises:
        RuntimeError: called off the loop the chain runs on (the figures are the loop's).
    """
    try:
        head = _HANDLES.get(running, running)
    except TypeError:  # neither hashable nor weakly referable: not a handle
        head = running
    return Snapshot(tuple(_chain(head, set(), current_loop())))
