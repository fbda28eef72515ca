"""``do_on_error``: call a function with the upstream error before passing it on.

A thin face of the shared ``peek`` stage (`PeekPublisher`), which runs one optional callback
per signal.

Backpressure: pass-through.
Errors: if the function raises, its exception is signalled instead (the original becomes its
``__context__``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from .._core import Publisher
from ._peek import PeekPublisher

__all__ = ("do_on_error",)

T = TypeVar("T")


def do_on_error(source: Publisher[T], fn: Callable[[BaseException], object]) -> PeekPublisher[T]:
    """What `Flux.do_on_error` returns."""
    return PeekPublisher(source=source, on_error=fn)
