"""The self-contained engine: spec interfaces, demand, the drain, loop ownership, reporting.

Every source, operator, processor and adapter builds on these names and never re-implements
them. Nothing here imports from the rest of the package.

As in trio, every name in ``__all__`` is re-exported by exactly one public module:
``reactive_aio`` (the interfaces, errors and the overflow policy), ``reactive_aio.lowlevel``
(the kit for authors of stages) or ``reactive_aio.testing`` (the protocol checker). The other
names imported here are the engine room the other layers share and no author needs: each is
listed, with its reason, in ``tests/test_exports.py``.
"""

from ._arbiter import SYNC_SWITCHES as SYNC_SWITCHES, ArbiterSubscriber as ArbiterSubscriber
from ._ask_ahead import AskAheadSubscriber as AskAheadSubscriber
from ._assembly import (
    Assembly as Assembly,
    note_checkpoint as note_checkpoint,
    note_stage as note_stage,
)
from ._attach import attach as attach, refuse as refuse
from ._buffer_drain import BufferDrain as BufferDrain, end_stream as end_stream
from ._cancellation import (
    cancelled_elsewhere as cancelled_elsewhere,
    cancelling_this_task as cancelling_this_task,
)
from ._checks import (
    request_error as request_error,
    require_not_none as require_not_none,
    require_publisher as require_publisher,
)
from ._companion import Companion as Companion, stop_companion as stop_companion
from ._deadline import (
    RESOLUTION as RESOLUTION,
    Deadline as Deadline,
    require_running_loop as require_running_loop,
)
from ._demand import (
    MAX_DEMAND as MAX_DEMAND,
    DemandWindow as DemandWindow,
    Replenisher as Replenisher,
    add_demand as add_demand,
    produced as produced,
    replenish_threshold as replenish_threshold,
)
from ._drain import (
    DRAIN_BATCH as DRAIN_BATCH,
    DROPS_PER_ITEM as DROPS_PER_ITEM,
    DrainSubscription as DrainSubscription,
)
from ._dropping import DroppingSubscriber as DroppingSubscriber
from ._exceptions import (
    InvalidRequestError as InvalidRequestError,
    MissingBackpressureError as MissingBackpressureError,
    NonPositiveRequestError as NonPositiveRequestError,
    NoSuchElementError as NoSuchElementError,
    NullSignalError as NullSignalError,
    ProtocolViolationError as ProtocolViolationError,
    read_once_error as read_once_error,
    short_repr as short_repr,
    stream_error as stream_error,
)
from ._fusion import (
    FOLD_TURN as FOLD_TURN,
    AsyncBoundary as AsyncBoundary,
    AsyncBoundarySubscriber as AsyncBoundarySubscriber,
    AsyncSource as AsyncSource,
    AwaitedCalls as AwaitedCalls,
    AwaitingSource as AwaitingSource,
    AwaitingSubscription as AwaitingSubscription,
    Batching as Batching,
    DeferredSubscription as DeferredSubscription,
    FusableSource as FusableSource,
    FusedPublisher as FusedPublisher,
    FusedSubscriber as FusedSubscriber,
    ItemsSubscriber as ItemsSubscriber,
    IteratorSubscription as IteratorSubscription,
    PulledSubscription as PulledSubscription,
    SyncInner as SyncInner,
    SyncOwner as SyncOwner,
    SyncSource as SyncSource,
    Transparent as Transparent,
    close_async_iterator as close_async_iterator,
    exact_length as exact_length,
    fold_at_hand as fold_at_hand,
    fuse as fuse,
    fuse_boundary as fuse_boundary,
    fusion_source as fusion_source,
    items_at_hand as items_at_hand,
    iterate_awaiting as iterate_awaiting,
    null_result_error as null_result_error,
    serve_calls as serve_calls,
    subscribe_pulled as subscribe_pulled,
)
from ._gated import GatedSubscriber as GatedSubscriber
from ._lockstep import LockstepDrain as LockstepDrain
from ._loop import current_loop as current_loop, hand_over as hand_over
from ._loop_boundary import LoopBound as LoopBound, LoopBoundary as LoopBoundary, adopt as adopt
from ._operator import (
    OperatorSubscriber as OperatorSubscriber,
    PassThroughSubscriber as PassThroughSubscriber,
)
from ._overflow import (
    Overflow as Overflow,
    OverflowDrain as OverflowDrain,
    OverflowSubscriber as OverflowSubscriber,
    OverflowThen as OverflowThen,
)
from ._protocol_check import (
    DEBUG as DEBUG,
    DEBUG_CHECKER as DEBUG_CHECKER,
    CheckedPublisher as CheckedPublisher,
    ProtocolChecker as ProtocolChecker,
    Violation as Violation,
    assembly_site as assembly_site,
)
from ._queue_drain import (
    OuterDrain as OuterDrain,
    QueueDrain as QueueDrain,
    QueueSubscriber as QueueSubscriber,
)
from ._report import (
    logger as logger,
    report_error as report_error,
    report_late_error as report_late_error,
)
from ._scan import (
    Snapshot as Snapshot,
    StageScan as StageScan,
    StageSnapshot as StageSnapshot,
    StageState as StageState,
    operator_name as operator_name,
    register_handle as register_handle,
    scan_of as scan_of,
    snapshot as snapshot,
    stage_state as stage_state,
)
from ._sized_timed import SizedTimedOperator as SizedTimedOperator
from ._spec import (
    Processor as Processor,
    Publisher as Publisher,
    Subscriber as Subscriber,
    Subscription as Subscription,
)
from ._tail import TailSubscriber as TailSubscriber
from ._unicast import UnicastBuffer as UnicastBuffer

__all__ = (
    "DRAIN_BATCH",
    "DROPS_PER_ITEM",
    "FOLD_TURN",
    "MAX_DEMAND",
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
    "InvalidRequestError",
    "ItemsSubscriber",
    "LoopBound",
    "MissingBackpressureError",
    "NoSuchElementError",
    "NonPositiveRequestError",
    "NullSignalError",
    "OperatorSubscriber",
    "Overflow",
    "PassThroughSubscriber",
    "Processor",
    "ProtocolChecker",
    "ProtocolViolationError",
    "Publisher",
    "QueueDrain",
    "QueueSubscriber",
    "Replenisher",
    "Snapshot",
    "StageScan",
    "StageSnapshot",
    "StageState",
    "Subscriber",
    "Subscription",
    "SyncInner",
    "SyncSource",
    "TailSubscriber",
    "UnicastBuffer",
    "Violation",
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
    "snapshot",
    "stage_state",
    "stream_error",
)
