"""``do_on_cancel``: call a function when downstream cancels, before upstream is cancelled.

A thin face of the shared ``peek`` stage (`PeekPublisher`), which runs one optional callback
per signal.

Backpressure: pass-through.
Errors: a raising function is reported (logger and loop exception handler): ``cancel`` must
return normally (rule 3.15).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from .._core import Publisher
from ._peek import PeekPublisher

__all__ = ("do_on_cancel",)

T = TypeVar("T")


def do_on_cancel(source: Publisher[T], fn: Callable[[], object]) -> PeekPublisher[T]:
    """What `Flux.do_on_cancel` returns."""
    return PeekPublisher(source=source, on_cancel=fn)
