"""``do_on_subscribe``: call a function with the upstream subscription before ``on_subscribe``
goes downstream.

A thin face of the shared ``peek`` stage (`PeekPublisher`), which runs one optional callback
per signal.

Backpressure: pass-through.
Errors: if the function raises, upstream is cancelled, downstream gets ``on_subscribe`` and then
``on_error``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from .._core import Publisher, Subscription
from ._peek import PeekPublisher

__all__ = ("do_on_subscribe",)

T = TypeVar("T")


def do_on_subscribe(source: Publisher[T], fn: Callable[[Subscription], object]) -> PeekPublisher[T]:
    """What `Flux.do_on_subscribe` returns."""
    return PeekPublisher(source=source, on_subscribe=fn)
