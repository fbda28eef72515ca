"""``do_on_next``: call a function with every item before passing it on.

A thin face of the shared ``peek`` stage (`PeekPublisher`), which runs one optional callback
per signal.

Backpressure: pass-through.
Errors: if the function raises, upstream is cancelled first, then ``on_error`` with its exception.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from .._core import Publisher
from ._peek import PeekPublisher

__all__ = ("do_on_next",)

T = TypeVar("T")


def do_on_next(source: Publisher[T], fn: Callable[[T], object]) -> PeekPublisher[T]:
    """What `Flux.do_on_next` returns."""
    return PeekPublisher(source=source, on_next=fn)
