"""The kit for writing your own sources and operators: the building blocks every stage of
reactive_aio is made of.

A one-in, one-out operator subclasses `OperatorSubscriber` (or `DroppingSubscriber` when it
may drop items); a source or an operator that emits at its own pace serves its subscriber
with a `DrainSubscription`, a `BufferDrain` (items pushed by a producer), a `PrefetchDrain`
(prefetched from an upstream) or a `QueueDrain` fed by `QueueSubscriber` s (several
upstreams) and `SyncInner` s (a `SyncSource` taken as an iterator, whose ``pull`` emits as
the drain allows); a source that awaits its items is an `AsyncSource` (an async iterator,
read within demand, with the maps and filters after it inline); an operator that switches
upstreams uses `ArbiterSubscriber`. An async
boundary lets a subscriber that is one itself (an `AsyncBoundarySubscriber`, such as the
buffer behind ``async for``) take its place with `fuse_boundary`. `fusion_source` shows the
code generated for a fused chain of maps and filters. The demand helpers saturate at
`reactive_aio.MAX_DEMAND`; the checks raise the errors the specification asks for. See the
guide "Writing an operator".

Everything here is as stable as the rest of the public API, but it is meant for authors of
stages, not for building pipelines: use `reactive_aio.Flux` for that.
"""

from . import _fix_module_names
from ._core import (
    DRAIN_BATCH as DRAIN_BATCH,
    DROPS_PER_ITEM as DROPS_PER_ITEM,
    RESOLUTION as RESOLUTION,
    ArbiterSubscriber as ArbiterSubscriber,
    AsyncBoundarySubscriber as AsyncBoundarySubscriber,
    AsyncSource as AsyncSource,
    BufferDrain as BufferDrain,
    BufferOperator as BufferOperator,
    Deadline as Deadline,
    DeferredSubscription as DeferredSubscription,
    DemandWindow as DemandWindow,
    DrainSubscription as DrainSubscription,
    DroppingSubscriber as DroppingSubscriber,
    HookedDrain as HookedDrain,
    OperatorSubscriber as OperatorSubscriber,
    PrefetchDrain as PrefetchDrain,
    QueueDrain as QueueDrain,
    QueueSubscriber as QueueSubscriber,
    Replenisher as Replenisher,
    SyncInner as SyncInner,
    SyncSource as SyncSource,
    UnicastBuffer as UnicastBuffer,
    add_demand as add_demand,
    attach as attach,
    current_loop as current_loop,
    end_stream as end_stream,
    fuse_boundary as fuse_boundary,
    fusion_source as fusion_source,
    hand_over as hand_over,
    produced as produced,
    refuse as refuse,
    replenish_threshold as replenish_threshold,
    report_error as report_error,
    report_late_error as report_late_error,
    request_error as request_error,
    require_not_none as require_not_none,
    require_publisher as require_publisher,
    require_running_loop as require_running_loop,
)

__all__ = (
    "DRAIN_BATCH",
    "DROPS_PER_ITEM",
    "RESOLUTION",
    "ArbiterSubscriber",
    "AsyncBoundarySubscriber",
    "AsyncSource",
    "BufferDrain",
    "BufferOperator",
    "Deadline",
    "DeferredSubscription",
    "DemandWindow",
    "DrainSubscription",
    "DroppingSubscriber",
    "HookedDrain",
    "OperatorSubscriber",
    "PrefetchDrain",
    "QueueDrain",
    "QueueSubscriber",
    "Replenisher",
    "SyncInner",
    "SyncSource",
    "UnicastBuffer",
    "add_demand",
    "attach",
    "current_loop",
    "end_stream",
    "fuse_boundary",
    "fusion_source",
    "hand_over",
    "produced",
    "refuse",
    "replenish_threshold",
    "report_error",
    "report_late_error",
    "request_error",
    "require_not_none",
    "require_publisher",
    "require_running_loop",
)


_fix_module_names(__name__)
