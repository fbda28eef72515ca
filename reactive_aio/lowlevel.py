"""The kit for writing your own sources and operators: the building blocks every stage of
reactive_aio is made of.

One-to-one operators (one subscriber upstream, one downstream, items passed on as they come)
subclass a subscriber base: `OperatorSubscriber` (or `DroppingSubscriber` when it may drop
items, `AskAheadSubscriber` when it drops or holds back its first *n*, `GatedSubscriber` when
another publisher's first item opens or closes the gate, `TailSubscriber` when what it emits
is only known at completion, `PassThroughSubscriber` when items go past it untouched and it
only watches demand and the end).

A source or an operator that emits at its own pace serves its subscriber with one of four
emission mechanisms:

* `DrainSubscription`: it says what to emit, the drain says when;
* `BufferDrain`: a FIFO filled by a producer it is handed to, or by an upstream it prefetches
  from, configured by keywords;
* `QueueDrain`: bounded queues fed by `QueueSubscriber` s (several upstreams;
  `QueueDrain.subscribe_all` for a fixed series of them) and `SyncInner` s (a `SyncSource`
  taken as an iterator, whose ``pull`` emits as the drain allows);
  a source that awaits its items is an `AsyncSource` (an async iterator, or batches sized by
  demand, read within demand from one task, with the maps and filters after it inline);
* `ArbiterSubscriber`: an operator that switches upstreams.

A `UnicastBuffer` is a ready-made publisher for one subscriber, fed by a producer
(sub-streams). An operator that takes another publisher (an argument, or one a user function
returns) subscribes to ``adopt(publisher)``: publishers of this library (`LoopBound`) pass
unchanged, others get a loop boundary, so their signals arrive on the subscriber's loop. An
async boundary (marked `AsyncBoundary`) lets a subscriber that is one itself (an
`AsyncBoundarySubscriber`, such as the buffer behind ``async for``) take its place with
`fuse_boundary`, and a publisher of lists of what was buffered (`Batching`) lets such a buffer
hand out slices of itself instead; a sink that takes lists of items (an `ItemsSubscriber`) is
served a source at hand's items a request at a time, one ``on_items`` call each;
`fusion_source` shows the code generated for a fused chain of maps and filters. The demand helpers saturate at
`reactive_aio.MAX_DEMAND`; the checks raise the errors the specification asks for;
`stream_error`, `cancelled_elsewhere`/`cancelling_this_task`, `read_once_error` and
`short_repr` turn what user code raised (or a one-shot iterable read twice) into the error a
stream carries. An operator steered by another publisher (a boundary, a sampler, a
companion for retries) follows it with a `Companion`. Every base reports its stage to
`reactive_aio.snapshot` (``scan_stage()``, a `StageScan`); an operator with more structure
extends that record. See the guide "Writing an operator".

Everything here is as stable as the rest of the public API, but it is meant for authors of
stages, not for building pipelines: use `reactive_aio.Flux` for that.
"""

from ._core import (
    DRAIN_BATCH as DRAIN_BATCH,
    DROPS_PER_ITEM as DROPS_PER_ITEM,
    FOLD_TURN as FOLD_TURN,
    RESOLUTION as RESOLUTION,
    ArbiterSubscriber as ArbiterSubscriber,
    AskAheadSubscriber as AskAheadSubscriber,
    AsyncBoundary as AsyncBoundary,
    AsyncBoundarySubscriber as AsyncBoundarySubscriber,
    AsyncSource as AsyncSource,
    Batching as Batching,
    BufferDrain as BufferDrain,
    Companion as Companion,
    Deadline as Deadline,
    DeferredSubscription as DeferredSubscription,
    DemandWindow as DemandWindow,
    DrainSubscription as DrainSubscription,
    DroppingSubscriber as DroppingSubscriber,
    GatedSubscriber as GatedSubscriber,
    ItemsSubscriber as ItemsSubscriber,
    LoopBound as LoopBound,
    OperatorSubscriber as OperatorSubscriber,
    PassThroughSubscriber as PassThroughSubscriber,
    QueueDrain as QueueDrain,
    QueueSubscriber as QueueSubscriber,
    Replenisher as Replenisher,
    StageScan as StageScan,
    StageState as StageState,
    SyncInner as SyncInner,
    SyncSource as SyncSource,
    TailSubscriber as TailSubscriber,
    UnicastBuffer as UnicastBuffer,
    add_demand as add_demand,
    adopt as adopt,
    attach as attach,
    cancelled_elsewhere as cancelled_elsewhere,
    cancelling_this_task as cancelling_this_task,
    current_loop as current_loop,
    end_stream as end_stream,
    fuse_boundary as fuse_boundary,
    fusion_source as fusion_source,
    hand_over as hand_over,
    operator_name as operator_name,
    produced as produced,
    read_once_error as read_once_error,
    refuse as refuse,
    register_handle as register_handle,
    replenish_threshold as replenish_threshold,
    report_error as report_error,
    report_late_error as report_late_error,
    request_error as request_error,
    require_not_none as require_not_none,
    require_publisher as require_publisher,
    require_running_loop as require_running_loop,
    scan_of as scan_of,
    short_repr as short_repr,
    stage_state as stage_state,
    stream_error as stream_error,
)
from ._names import fix_module_names as _fix_module_names

__all__ = (
    "DRAIN_BATCH",
    "DROPS_PER_ITEM",
    "FOLD_TURN",
    "RESOLUTION",
    "ArbiterSubscriber",
    "AskAheadSubscriber",
    "AsyncBoundary",
    "AsyncBoundarySubscriber",
    "AsyncSource",
    "Batching",
    "BufferDrain",
    "Companion",
    "Deadline",
    "DeferredSubscription",
    "DemandWindow",
    "DrainSubscription",
    "DroppingSubscriber",
    "GatedSubscriber",
    "ItemsSubscriber",
    "LoopBound",
    "OperatorSubscriber",
    "PassThroughSubscriber",
    "QueueDrain",
    "QueueSubscriber",
    "Replenisher",
    "StageScan",
    "StageState",
    "SyncInner",
    "SyncSource",
    "TailSubscriber",
    "UnicastBuffer",
    "add_demand",
    "adopt",
    "attach",
    "cancelled_elsewhere",
    "cancelling_this_task",
    "current_loop",
    "end_stream",
    "fuse_boundary",
    "fusion_source",
    "hand_over",
    "operator_name",
    "produced",
    "read_once_error",
    "refuse",
    "register_handle",
    "replenish_threshold",
    "report_error",
    "report_late_error",
    "request_error",
    "require_not_none",
    "require_publisher",
    "require_running_loop",
    "scan_of",
    "short_repr",
    "stage_state",
    "stream_error",
)


_fix_module_names(__name__)
