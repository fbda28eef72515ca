"""reactive_aio: Reactive Streams for asyncio.

The friendly surface. Each name has exactly one public home; the implementation lives in
private modules (``_core`` for the protocol engine, ``_sources``/``_operators``/``_sinks``/
``_processors`` for the parts, ``_flux`` for the fluent face).
"""

from ._core import (
    MAX_DEMAND as MAX_DEMAND,
    MissingBackpressureError as MissingBackpressureError,
    NonPositiveRequestError as NonPositiveRequestError,
    NoSuchElementError as NoSuchElementError,
    NullSignalError as NullSignalError,
    Processor as Processor,
    ProtocolViolationError as ProtocolViolationError,
    Publisher as Publisher,
    Subscriber as Subscriber,
    Subscription as Subscription,
)
from ._flux import Flux as Flux
from ._sinks._aiter import to_async_iterator as to_async_iterator
from ._sinks._lambda import Disposable as Disposable
from ._version import __version__ as __version__

__all__ = (
    "MAX_DEMAND",
    "Disposable",
    "Flux",
    "MissingBackpressureError",
    "NoSuchElementError",
    "NonPositiveRequestError",
    "NullSignalError",
    "Processor",
    "ProtocolViolationError",
    "Publisher",
    "Subscriber",
    "Subscription",
    "__version__",
    "to_async_iterator",
)


def _fix_module_names() -> None:
    # Tracebacks, reprs and docs show reactive_aio.X, the one public home of each name.
    for name in __all__:
        obj = globals()[name]
        if isinstance(obj, type) and obj.__module__.startswith("reactive_aio._"):
            obj.__module__ = __name__


_fix_module_names()
