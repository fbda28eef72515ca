"""Loop ownership: a component belongs to the loop it was subscribed on.

Calls that arrive from outside that loop (other threads) are handed over with
``call_soon_threadsafe`` before they touch any state, so state is only ever mutated by the
owning loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVarTuple

__all__ = ("current_loop", "hand_over")

Ts = TypeVarTuple("Ts")


current_loop: Callable[[], asyncio.AbstractEventLoop | None] = asyncio._get_running_loop
"""The running loop of this thread, or ``None`` when called outside of one (a C function:
the loop check on every item costs no Python call)."""


def hand_over(
    loop: asyncio.AbstractEventLoop | None,
    fn: Callable[[*Ts], object],
    *args: *Ts,
) -> bool:
    """Schedule ``fn(*args)`` on *loop* unless the caller is running inside *loop* already.

    "Foreign" means "not inside the owning loop": another thread, or the owning thread while
    its loop is not running (plain code between two ``run_until_complete`` calls), where work
    that needs the loop (subscribing an async source) could not run.

    Returns True when the call was handed over, False when the caller must run the call
    itself: it is inside the owning loop, the component has no loop (it was subscribed outside
    of one), or the loop is closed (nothing runs on it any more, so a late ``cancel`` still
    releases its resources here).
    """
    if loop is None or asyncio._get_running_loop() is loop or loop.is_closed():
        return False
    try:
        loop.call_soon_threadsafe(fn, *args)
    except RuntimeError:  # closed meanwhile: request/cancel must return normally (3.15, 3.16)
        return False
    return True
