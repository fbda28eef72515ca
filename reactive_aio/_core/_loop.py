"""Loop ownership: a component belongs to the loop (and thread) it was subscribed on.

Calls that arrive from other threads are handed over with ``call_soon_threadsafe`` before
they touch any state, so state is only ever mutated on the owning thread.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import TypeVarTuple, Unpack

__all__ = ("current_loop", "current_thread", "hand_over")

current_thread = threading.get_ident
"""Identity of the calling thread; compared against the owner's on every request/cancel."""

Ts = TypeVarTuple("Ts")


def current_loop() -> asyncio.AbstractEventLoop | None:
    """The running loop of this thread, or ``None`` when called outside of one."""
    return asyncio._get_running_loop()


def hand_over(
    loop: asyncio.AbstractEventLoop | None,
    thread: int,
    fn: Callable[[Unpack[Ts]], object],
    *args: *Ts,
) -> bool:
    """Schedule ``fn(*args)`` on *loop* when called from a thread other than *thread*.

    Returns True when the call was handed over (or dropped because the loop is closed:
    there is nobody left to signal), False when the caller is on the owning thread (or
    the component has no loop) and must run the call itself.
    """
    if loop is None or thread == threading.get_ident():
        return False
    try:
        loop.call_soon_threadsafe(fn, *args)
    except RuntimeError:  # loop closed: request/cancel must still return normally (3.15, 3.16)
        pass
    return True
