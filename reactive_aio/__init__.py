"""reactive_aio: Reactive Streams for asyncio.

The friendly surface. Each name has exactly one public home; the implementation lives in
private modules (``_core`` for the protocol engine, ``_sources``/``_operators``/``_sinks``/
``_processors`` for the parts, ``_flux`` for the fluent face, ``_commit`` for the commit
protocol between the batching sinks of ``spark`` and ``connectors`` and their sources).
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._commit import CommitListener as CommitListener, PositionSet as PositionSet
    from ._core import (
        MAX_DEMAND as MAX_DEMAND,
        InvalidRequestError as InvalidRequestError,
        MissingBackpressureError as MissingBackpressureError,
        NonPositiveRequestError as NonPositiveRequestError,
        NoSuchElementError as NoSuchElementError,
        NullSignalError as NullSignalError,
        Overflow as Overflow,
        Processor as Processor,
        ProtocolViolationError as ProtocolViolationError,
        Publisher as Publisher,
        Snapshot as Snapshot,
        StageSnapshot as StageSnapshot,
        Subscriber as Subscriber,
        Subscription as Subscription,
        snapshot as snapshot,
    )
    from ._flux import Flux as Flux
    from ._operators._do_finally import EndSignal as EndSignal
    from ._operators._materialize import Notification as Notification
    from ._operators._publish import ConnectableFlux as ConnectableFlux
    from ._operators._retry_when import Retry as Retry
    from ._processors._multicast import MulticastProcessor as MulticastProcessor
    from ._processors._replay import (
        BehaviorProcessor as BehaviorProcessor,
        ReplayProcessor as ReplayProcessor,
    )
    from ._processors._unicast import UnicastProcessor as UnicastProcessor
    from ._sinks._aiter import to_async_iterator as to_async_iterator
    from ._sinks._lambda import Disposable as Disposable
    from ._sources._create import FluxSink as FluxSink
    from ._sources._submission import SubmissionPublisher as SubmissionPublisher
    from ._version import __version__ as __version__

__all__ = (
    "MAX_DEMAND",
    "BehaviorProcessor",
    "CommitListener",
    "ConnectableFlux",
    "Disposable",
    "EndSignal",
    "Flux",
    "FluxSink",
    "InvalidRequestError",
    "MissingBackpressureError",
    "MulticastProcessor",
    "NoSuchElementError",
    "NonPositiveRequestError",
    "Notification",
    "NullSignalError",
    "Overflow",
    "PositionSet",
    "Processor",
    "ProtocolViolationError",
    "Publisher",
    "ReplayProcessor",
    "Retry",
    "Snapshot",
    "StageSnapshot",
    "SubmissionPublisher",
    "Subscriber",
    "Subscription",
    "UnicastProcessor",
    "__version__",
    "snapshot",
    "to_async_iterator",
)


_HOMES = {
    "._commit": ("CommitListener", "PositionSet"),
    "._core": (
        "MAX_DEMAND",
        "InvalidRequestError",
        "MissingBackpressureError",
        "NonPositiveRequestError",
        "NoSuchElementError",
        "NullSignalError",
        "Overflow",
        "Processor",
        "ProtocolViolationError",
        "Publisher",
        "Snapshot",
        "StageSnapshot",
        "Subscriber",
        "Subscription",
        "snapshot",
    ),
    "._flux": ("Flux",),
    "._operators._do_finally": ("EndSignal",),
    "._operators._materialize": ("Notification",),
    "._operators._publish": ("ConnectableFlux",),
    "._operators._retry_when": ("Retry",),
    "._processors._multicast": ("MulticastProcessor",),
    "._processors._replay": ("BehaviorProcessor", "ReplayProcessor"),
    "._processors._unicast": ("UnicastProcessor",),
    "._sinks._aiter": ("to_async_iterator",),
    "._sinks._lambda": ("Disposable",),
    "._sources._create": ("FluxSink",),
    "._sources._submission": ("SubmissionPublisher",),
    "._version": ("__version__",),
}
"""The private module each public name lives in: the imports above, which type checkers read
(`tests/test_exports.py` keeps the two the same)."""

if not TYPE_CHECKING:  # each part is imported when one of its names is first read
    from ._names import lazy_namespace

    __getattr__, __dir__ = lazy_namespace(__name__, _HOMES)
