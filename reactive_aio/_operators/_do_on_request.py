"""``do_on_request``: call a function with every downstream request before it goes upstream.

A thin face of the shared ``peek`` stage (`PeekPublisher`), which runs one optional callback
per signal.

Backpressure: pass-through.
Errors: if the function raises, upstream is cancelled first, then ``on_error``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from .._core import Publisher
from ._peek import PeekPublisher

__all__ = ("do_on_request",)

T = TypeVar("T")


def do_on_request(source: Publisher[T], fn: Callable[[int], object]) -> PeekPublisher[T]:
    """What `Flux.do_on_request` returns."""
    return PeekPublisher(source=source, on_request=fn)
