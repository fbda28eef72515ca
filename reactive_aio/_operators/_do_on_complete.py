"""``do_on_complete``: call a function before passing completion on.

A thin face of the shared ``peek`` stage (`PeekPublisher`), which runs one optional callback
per signal.

Backpressure: pass-through.
Errors: if the function raises, its exception is signalled instead of completion.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from .._core import Publisher
from ._peek import PeekPublisher

__all__ = ("do_on_complete",)

T = TypeVar("T")


def do_on_complete(source: Publisher[T], fn: Callable[[], object]) -> PeekPublisher[T]:
    """What `Flux.do_on_complete` returns."""
    return PeekPublisher(source=source, on_complete=fn)
